// router.model = "booksim" and BookSim2's measurement (sim/experiment/run_booksim.h): the
// zero-load latency 7 + (4 + L) D + (P - 1) measured on BookSim2, the measurement's verdicts,
// and the summary lines printed from the record (sim/experiment/booksim_summary.h).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/experiment/booksim_reader.h"
#include "sim/experiment/booksim_summary.h"
#include "sim/experiment/flit_fields.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/run.h"

namespace ukai::sim {
namespace {

SimConfig Load(const std::string& text) {
  Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(text, "t.cfg", {});
  EXPECT_TRUE(points.ok()) << points.status().ToString();
  return points.ok() ? points->front() : SimConfig();
}

std::string Small(const std::string& topology, int packet, const std::string& traffic,
                  double rate) {
  return "topology = " + topology + "; k = 4; n = 2; routing_function = dim_order; num_vcs = 4;" +
         " traffic = " + traffic + "; packet_size = " + std::to_string(packet) +
         "; injection_rate = " + std::to_string(rate) +
         "; sample_period = 1000; warmup_periods = 1; max_samples = 6; seed = 3;";
}

// Every packet's latency at zero load is 7 + (4 + L) D + (P - 1): at a low rate the least
// latency over packets that crossed D links is the formula (contention only adds), and with
// neighbor traffic on a torus (every coordinate + 1) every packet crosses D = 2 links.
TEST(BooksimModel, ZeroLoadLatencyFormula) {
  struct Case {
    std::string topology;
    int packet;
    int link;  // L: 1 on a mesh; 2 on a torus (use_noc_latency = 1)
  };
  for (const Case& c :
       {Case{"mesh", 1, 1}, Case{"mesh", 4, 1}, Case{"torus", 1, 2}, Case{"torus", 5, 2}}) {
    SCOPED_TRACE(c.topology + " P=" + std::to_string(c.packet));
    // Uniform (the source included): the least latency is a packet to itself, D = 0.
    SimConfig u = Load(Small(c.topology, c.packet, "uniform", 0.01));
    Result<PointResult> ru = RunPoint(u);
    ASSERT_TRUE(ru.ok()) << ru.status().ToString();
    EXPECT_EQ(ru->booksim.stat[BooksimFigures::kPacketLatency][BooksimFigures::kMin],
              7 + (c.packet - 1));
    if (c.topology != "torus") continue;
    SimConfig n = Load(Small(c.topology, c.packet, "neighbor", 0.0005));
    Result<PointResult> rn = RunPoint(n);
    ASSERT_TRUE(rn.ok()) << rn.status().ToString();
    const double expect = 7 + (4 + c.link) * 2 + (c.packet - 1);
    EXPECT_EQ(rn->booksim.stat[BooksimFigures::kPacketLatency][BooksimFigures::kMin], expect);
    EXPECT_EQ(rn->booksim.stat[BooksimFigures::kPacketLatency][BooksimFigures::kMax], expect);
    EXPECT_EQ(rn->booksim.hops, 3);  // BookSim2 counts routers: D + 1
    EXPECT_EQ(rn->booksim.stat[BooksimFigures::kFragmentation][BooksimFigures::kMax], 0);
    // Flits arrive one per cycle after the head: mean flit latency = tail - (P - 1) / 2.
    EXPECT_DOUBLE_EQ(rn->booksim.stat[BooksimFigures::kFlitLatency][BooksimFigures::kAvg],
                     expect - (c.packet - 1) / 2.0);
  }
}

TEST(BooksimModel, StableBelowSaturationUnstableAbove) {
  Result<PointResult> low = RunPoint(Load(Small("mesh", 1, "uniform", 0.1)));
  ASSERT_TRUE(low.ok()) << low.status().ToString();
  EXPECT_TRUE(low->booksim.present);
  EXPECT_FALSE(low->booksim.unstable);
  EXPECT_NEAR(low->booksim.stat[BooksimFigures::kAcceptedFlitRate][BooksimFigures::kAvg], 0.1,
              0.02);
  EXPECT_NE(low->booksim.log.find("Warmed up ..."), std::string::npos);
  // Far past saturation (transpose on an 8x8 mesh saturates near 0.15): the latency
  // threshold ends the run.
  Result<PointResult> high =
      RunPoint(Load("topology = mesh; k = 8; n = 2; routing_function = dim_order; num_vcs = 4; "
                    "traffic = transpose; injection_rate = 0.5; sample_period = 300; seed = 3;"));
  ASSERT_TRUE(high.ok()) << high.status().ToString();
  EXPECT_TRUE(high->booksim.unstable);
  EXPECT_TRUE(high->saturated);
  EXPECT_NE(high->booksim.log.find("Average latency for class 0 exceeded 500 cycles"),
            std::string::npos)
      << high->booksim.log;
}

TEST(BooksimModel, SummaryLines) {
  const SimConfig c = Load(Small("mesh", 2, "uniform", 0.05));
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::ostringstream out;
  ASSERT_TRUE(MakeBooksimSummaryWriter(&out)->Write(PointRecord(0, c, *r)).ok());
  const std::string text = out.str();
  for (const char* line :
       {"Time taken is ", "====== Overall Traffic Statistics ======", "Packet latency average = ",
        "Network latency average = ", "Flit latency average = ", "Fragmentation average = ",
        "Injected packet rate average = ", "Accepted packet rate average = ",
        "Injected flit rate average = ", "Accepted flit rate average = ", "Hops average = ",
        "\tminimum = ", "\tmaximum = ", "Total run time "}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_NE(text.find("Time taken is " + std::to_string(r->cycles) + " cycles\n"),
            std::string::npos);
  std::ostringstream avg;
  avg << "Packet latency average = "
      << r->booksim.stat[BooksimFigures::kPacketLatency][BooksimFigures::kAvg] << " (1 samples)";
  EXPECT_NE(text.find(avg.str()), std::string::npos) << avg.str() << "\n" << text;

  PointResult unstable = *r;
  unstable.booksim.unstable = true;
  std::ostringstream out2;
  ASSERT_TRUE(MakeBooksimSummaryWriter(&out2)->Write(PointRecord(0, c, unstable)).ok());
  EXPECT_NE(out2.str().find("Simulation unstable, ending ...\n"), std::string::npos);
  EXPECT_EQ(out2.str().find("Packet latency average"), std::string::npos);

  // A record without BookSim2's figures is refused naming measure.mode.
  PointResult plain;
  std::ostringstream out3;
  Status st = MakeBooksimSummaryWriter(&out3)->Write(PointRecord(0, SimConfig(), plain));
  EXPECT_EQ(st.key(), "measure.mode");
}

}  // namespace
}  // namespace ukai::sim
