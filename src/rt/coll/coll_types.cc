// Names of the collectives' enums (DataType, ReduceOp, Collective, Algorithm), their parsers,
// Reduction::User and the table of algorithms per collective.
#include <string>

#include "rt/coll/schedule.h"
#include "ukai/rt/group.hpp"

namespace ukai::rt {
namespace {

// One table per enum: value and name, in declaration order.
template <class E>
struct Named {
  E value;
  std::string_view name;
};

constexpr Named<DataType> kDataTypes[] = {
    {DataType::kByte, "byte"},     {DataType::kInt32, "int32"},   {DataType::kInt64, "int64"},
    {DataType::kUint32, "uint32"}, {DataType::kUint64, "uint64"}, {DataType::kFloat, "float"},
    {DataType::kDouble, "double"},
};
constexpr Named<ReduceOp> kReduceOps[] = {
    {ReduceOp::kSum, "sum"},   {ReduceOp::kProd, "prod"}, {ReduceOp::kMin, "min"},
    {ReduceOp::kMax, "max"},   {ReduceOp::kBand, "band"}, {ReduceOp::kBor, "bor"},
    {ReduceOp::kBxor, "bxor"}, {ReduceOp::kUser, "user"},
};
constexpr Named<Collective> kCollectives[] = {
    {Collective::kBarrier, "barrier"},     {Collective::kBroadcast, "broadcast"},
    {Collective::kScatter, "scatter"},     {Collective::kGather, "gather"},
    {Collective::kAllgather, "allgather"}, {Collective::kReduce, "reduce"},
    {Collective::kAllreduce, "allreduce"}, {Collective::kReduceScatter, "reduce_scatter"},
    {Collective::kAlltoall, "alltoall"},   {Collective::kSendRecv, "sendrecv"},
};
constexpr Named<Algorithm> kAlgorithms[] = {
    {Algorithm::kAuto, "auto"},
    {Algorithm::kDirect, "direct"},
    {Algorithm::kBinomial, "binomial"},
    {Algorithm::kChain, "chain"},
    {Algorithm::kRing, "ring"},
    {Algorithm::kRecursiveDoubling, "recursive_doubling"},
    {Algorithm::kRecursiveHalving, "recursive_halving"},
    {Algorithm::kPairwise, "pairwise"},
    {Algorithm::kRelay, "relay"},
};

template <class E, size_t N>
std::string_view NameOf(const Named<E> (&table)[N], E value) {
  for (const auto& e : table) {
    if (e.value == value) return e.name;
  }
  return "unknown";
}

template <class E, size_t N>
Result<E> Parse(const Named<E> (&table)[N], std::string_view name, std::string_view what) {
  std::string known;
  for (const auto& e : table) {
    if (e.name == name) return e.value;
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  return Status::InvalidArgument("unknown " + std::string(what) + " '" + std::string(name) +
                                 "' (known: " + known + ")");
}

}  // namespace

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kDouble:
      return 8;
    case DataType::kByte:
      break;
  }
  return 1;
}

std::string_view DataTypeName(DataType type) { return NameOf(kDataTypes, type); }
Result<DataType> ParseDataType(std::string_view name) {
  return Parse(kDataTypes, name, "data type");
}
std::string_view ReduceOpName(ReduceOp op) { return NameOf(kReduceOps, op); }
Result<ReduceOp> ParseReduceOp(std::string_view name) {
  return Parse(kReduceOps, name, "reduction");
}
std::string_view CollectiveName(Collective c) { return NameOf(kCollectives, c); }
Result<Collective> ParseCollective(std::string_view name) {
  return Parse(kCollectives, name, "collective");
}
std::string_view AlgorithmName(Algorithm a) { return NameOf(kAlgorithms, a); }
Result<Algorithm> ParseAlgorithm(std::string_view name) {
  return Parse(kAlgorithms, name, "algorithm");
}

std::vector<Algorithm> AlgorithmsFor(Collective c) { return coll::ImplementedAlgorithms(c); }

Reduction Reduction::User(ReduceFunction fn, bool commutative, std::string name) {
  Reduction r(ReduceOp::kUser);
  r.fn_ = std::move(fn);
  r.commutative_ = commutative;
  r.name_ = std::move(name);
  return r;
}

}  // namespace ukai::rt
