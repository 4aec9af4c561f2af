#include "ukai_pingpong.h"

namespace ukai::bench {

std::vector<PingPongSeries> UkaiSeries() { return {}; }

}  // namespace ukai::bench
