// <ukai/requires_cxx20.hpp>: included first by every public header. The headers use C++20
// (concepts, std::span, designated initializers); compiled as an older C++ they stop with
// this one error, and the headers' contents are skipped (no cascade of follow-up errors).
#ifndef UKAI_REQUIRES_CXX20_HPP_
#define UKAI_REQUIRES_CXX20_HPP_

#if __cplusplus < 202002L
#error "ukai needs C++20: compile with -std=c++20 (or -std=gnu++20) or later"
#endif

#endif  // UKAI_REQUIRES_CXX20_HPP_
