// <ukai/ukai.hpp>: the ukai communication runtime (namespace ukai::rt).
//
//   ukai/rt/runtime.hpp     Runtime, Context, Endpoint, handlers, SendRsr, options
//   ukai/rt/request.hpp     request/reply: ReplyFuture, Reply, Replier, RequestOptions
//   ukai/status.hpp         Status, Result<T>
//   ukai/rt/startpoint.hpp  Startpoint (global pointer), DescriptorTable
//   ukai/rt/buffer.hpp      Buffer (typed pack), Reader (typed unpack)
//   ukai/rt/byte_block.hpp  ByteBlock (owned bytes)
//   ukai/rt/group.hpp       Group: collectives (broadcast, reductions, all-to-all, ...)
//
// Minimal program:
//   auto rt = ukai::rt::Runtime::Init(argc, argv);          // consumes --ukai-* options
//   auto ctx = (*rt)->CreateContext({.name = "main", .init = ...});
//   (*rt)->SendRsr(std::move(buf), startpoint, ukai::rt::HandlerId::Of("hello"));
// docs/runtime.md is the guide.
#ifndef UKAI_UKAI_HPP_
#define UKAI_UKAI_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include "ukai/rt/buffer.hpp"
#include "ukai/rt/byte_block.hpp"
#include "ukai/rt/group.hpp"
#include "ukai/rt/multicast.hpp"
#include "ukai/rt/request.hpp"
#include "ukai/rt/rma.hpp"
#include "ukai/rt/runtime.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/rt/vnode.hpp"
#include "ukai/status.hpp"

#endif  // __cplusplus >= 202002L

#endif  // UKAI_UKAI_HPP_
