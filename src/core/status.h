// Forwards to the public <ukai/status.hpp> (Status, Result<T>, BadResultAccess), so code
// in the tree keeps including "core/status.h".
#ifndef UKAI_CORE_STATUS_H_
#define UKAI_CORE_STATUS_H_

#include "ukai/status.hpp"

#endif  // UKAI_CORE_STATUS_H_
