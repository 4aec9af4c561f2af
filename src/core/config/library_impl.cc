// fmt's and toml++'s compiled parts, built into ukai_core instead of linking libfmt.so and
// libtomlplusplus.so: every start of `ukai` mapped and relocated both (about 250 KB of
// resident memory; docs/booksim.md, "Where ukai's memory goes"). The rest of the project
// compiles against the same headers with the same settings (FMT_SHARED, TOML_HEADER_ONLY=0,
// TOML_SHARED_LIB=1: src/core/CMakeLists.txt), so only the definitions move.
//
// toml++: TOML_IMPLEMENTATION in exactly one translation unit is its documented way to
// build the library's non-inline part. fmt: format-inl.h holds its non-template functions;
// the templates that format.h declares `extern template` are instantiated here for char
// (the only character type ukai formats).
#define TOML_IMPLEMENTATION
#include "core/config/toml.h"  // toml++, its key parser's precondition relaxed

#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
