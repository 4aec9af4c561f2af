// ProgressLine: a single status line redrawn in place ("\r...") on a terminal, for long
// runs (`ukai sim run` shows the point and the cycle reached). It is meant for stderr and
// only when stderr is a terminal (see IsTerminal), so that piped or redirected output
// never contains progress text.
//
// Updates are throttled: at most one redraw per `min_interval` (the first one is drawn at
// once). Clear() erases the line so that normal output can follow; it is called by the
// destructor too.
//
// Ownership: does not own the stream, which must outlive it. Thread safety: none.
#ifndef UKAI_CORE_PROGRESS_H_
#define UKAI_CORE_PROGRESS_H_

#include <chrono>
#include <ostream>
#include <string>
#include <string_view>

namespace ukai {

class ProgressLine {
 public:
  // A disabled line writes nothing at all.
  ProgressLine(std::ostream* out, bool enabled,
               std::chrono::milliseconds min_interval = std::chrono::milliseconds(100));
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Redraws the line with `text` unless the last redraw was less than min_interval ago.
  void Update(std::string_view text);
  // Redraws now, whatever the time since the last redraw.
  void Force(std::string_view text);
  // Erases the line if one is shown.
  void Clear();

  bool enabled() const { return enabled_; }

  // True when file descriptor `fd` is a terminal (isatty).
  static bool IsTerminal(int fd);

 private:
  std::ostream* out_;
  bool enabled_;
  std::chrono::milliseconds min_interval_;
  std::chrono::steady_clock::time_point last_;
  bool drawn_ = false;
};

}  // namespace ukai

#endif  // UKAI_CORE_PROGRESS_H_
