// The one way the project includes toml++ (Debian's libtomlplusplus-dev 3.3.0); the
// parser's compiled part is in library_impl.cc, which includes this header too.
//
// toml++ 3.3.0 states a precondition of its key parser with TOML_ASSERT_ASSUME that a
// malformed table header breaks: "[" followed by a line end, a NUL or another "[" ("[\n",
// "[\0a]", "[[[1]]]") reaches parser::parse_key() on a character that starts no key. Its
// code then reports "expected bare key starting character or string delimiter", a syntax
// error like any other, but the macro first asserts (an abort in every build without
// NDEBUG: the ASan+UBSan tests, a user's debug build) or, with NDEBUG under clang, tells
// the optimiser the case cannot happen (undefined behaviour). gcc's release build, which
// has no __builtin_assume, compiles the macro to nothing and so gives the syntax error.
// Found by sim_config_fuzz and booksim_config_fuzz (docs/fuzzing.md); fixed upstream in
// marzer/tomlplusplus pull request 301 (after 3.3.0). Here every build does what gcc's
// release build does: the macro checks nothing. toml++'s plain TOML_ASSERT checks stay.
// tests/core/config_reader_test.cc (`ConfigReaderTest.MalformedTableHeadersAreSyntaxErrors`)
// feeds such headers.
#ifndef UKAI_CORE_CONFIG_TOML_H_
#define UKAI_CORE_CONFIG_TOML_H_

#include <toml++/impl/preprocessor.h>  // defines TOML_ASSERT_ASSUME; #pragma once

#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_assert(true)

#include <toml++/toml.h>

#endif  // UKAI_CORE_CONFIG_TOML_H_
