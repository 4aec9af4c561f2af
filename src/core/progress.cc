#include "core/progress.h"

#include <unistd.h>

namespace ukai {

ProgressLine::ProgressLine(std::ostream* out, bool enabled, std::chrono::milliseconds min_interval)
    : out_(out), enabled_(enabled && out != nullptr), min_interval_(min_interval) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Update(std::string_view text) {
  if (!enabled_) return;
  if (drawn_ && std::chrono::steady_clock::now() - last_ < min_interval_) return;
  Force(text);
}

void ProgressLine::Force(std::string_view text) {
  if (!enabled_) return;
  // Carriage return, the text, then erase to the end of the line (ANSI EL).
  *out_ << '\r' << text << "\x1b[K" << std::flush;
  last_ = std::chrono::steady_clock::now();
  drawn_ = true;
}

void ProgressLine::Clear() {
  if (!enabled_ || !drawn_) return;
  *out_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

bool ProgressLine::IsTerminal(int fd) { return isatty(fd) == 1; }

}  // namespace ukai
