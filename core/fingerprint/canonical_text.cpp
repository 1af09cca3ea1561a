// RFC 8785 canonical form written straight from the JSON text, checked against the DOM path
// (canonical_json.cpp) by tests/unit/tst_fingerprint.cpp. Whatever it is unsure of, it hands
// back as nullopt rather than guess: a wrong canonical form would be a wrong fingerprint.
#include "core/fingerprint/canonical_text.h"

#include <algorithm>
#include <vector>

namespace idem::fp {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// One member of an open object, as offsets into the output: the member from its name's
/// opening quote up to (not including) the following ',' or '}', and the name's bytes.
struct Member {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t nameBegin = 0;
  std::size_t nameSize = 0;
};

/// One open array or object. Members of all open objects share one vector (this frame's
/// start at `firstMember`), so nesting costs no allocation per object.
struct Frame {
  std::size_t open = 0;  // output offset of the '{' or '['
  std::size_t firstMember = 0;
  bool isObject = false;
  bool sorted = true;  // members so far arrived in canonical order
};

class Canonicalizer {
 public:
  explicit Canonicalizer(std::string_view text) : in_(text) { out_.reserve(text.size()); }

  // A loop over an explicit stack rather than recursion: a body nested hundreds of
  // thousands of levels deep must not overflow the thread's stack.
  std::optional<std::string> run() {
    bool needValue = true;
    for (;;) {
      skipSpace();
      if (needValue) {
        if (atEnd()) return std::nullopt;
        const char c = in_[pos_];
        if (c == '{' || c == '[') {
          if (!open(c == '{', needValue)) return std::nullopt;
        } else if (!scalar(c)) {
          return std::nullopt;
        } else {
          needValue = false;
        }
        continue;
      }
      if (stack_.empty()) {
        if (!atEnd()) return std::nullopt;  // trailing bytes after the top-level value
        return std::move(out_);
      }
      if (atEnd()) return std::nullopt;
      const char c = in_[pos_++];
      const bool isObject = stack_.back().isObject;
      if (isObject) members_.back().end = out_.size();
      if (c == ',') {
        out_.push_back(',');
        needValue = true;
        if (isObject && !name()) return std::nullopt;
      } else if (c != (isObject ? '}' : ']') || !close()) {
        return std::nullopt;
      }
    }
  }

 private:
  bool atEnd() const { return pos_ >= in_.size(); }
  void skipSpace() {
    while (!atEnd() && isSpace(in_[pos_])) ++pos_;
  }
  std::string_view nameOf(const Member& m) const { return {out_.data() + m.nameBegin, m.nameSize}; }

  /// At '{' or '[': opens the frame; an empty one closes at once (then no value is needed).
  bool open(bool isObject, bool& needValue) {
    stack_.push_back({out_.size(), members_.size(), isObject, true});
    out_.push_back(in_[pos_++]);
    skipSpace();
    if (!atEnd() && in_[pos_] == (isObject ? '}' : ']')) {
      out_.push_back(in_[pos_++]);
      stack_.pop_back();
      needValue = false;
      return true;
    }
    needValue = true;
    return !isObject || name();
  }

  /// A member name and its ':'. Only plain ASCII names: for them byte order is RFC 8785's
  /// UTF-16 order and the text is already canonical; anything else goes to the DOM path.
  bool name() {
    skipSpace();
    if (atEnd() || in_[pos_] != '"') return false;
    std::size_t i = pos_ + 1;
    for (; i < in_.size() && in_[i] != '"'; ++i) {
      const auto b = static_cast<unsigned char>(in_[i]);
      if (b < 0x20 || b >= 0x80 || b == '\\') return false;
    }
    if (i >= in_.size()) return false;
    const Member m{out_.size(), 0, out_.size() + 1, i - pos_ - 1};
    out_.append(in_.substr(pos_, i + 1 - pos_));
    pos_ = i + 1;
    Frame& top = stack_.back();
    if (members_.size() > top.firstMember) {
      const auto order = nameOf(members_.back()).compare(nameOf(m));
      if (order == 0) return false;  // duplicate: nlohmann keeps the last, leave that to it
      if (order > 0) top.sorted = false;
    }
    members_.push_back(m);
    skipSpace();
    if (atEnd() || in_[pos_] != ':') return false;
    out_.push_back(in_[pos_++]);
    return true;
  }

  /// At the closing bracket of the top frame, with its last member's end recorded.
  bool close() {
    const Frame top = stack_.back();
    stack_.pop_back();
    if (top.isObject) {
      if (!top.sorted && !reorder(top)) return false;
      members_.resize(top.firstMember);
    }
    out_.push_back(top.isObject ? '}' : ']');
    return true;
  }

  /// Rewrites an object's members, already canonical each, in name order in the same bytes.
  bool reorder(const Frame& top) {
    const auto first = members_.begin() + static_cast<std::ptrdiff_t>(top.firstMember);
    std::sort(first, members_.end(), [this](const Member& a, const Member& b) { return nameOf(a) < nameOf(b); });
    for (auto it = first + 1; it < members_.end(); ++it)
      if (nameOf(*(it - 1)) == nameOf(*it)) return false;  // duplicate names
    const std::size_t base = top.open + 1;
    scratch_.assign(out_, base);
    std::size_t at = base;
    for (auto it = first; it != members_.end(); ++it) {
      if (it != first) out_[at++] = ',';
      scratch_.copy(out_.data() + at, it->end - it->begin, it->begin - base);
      at += it->end - it->begin;
    }
    return true;
  }

  bool scalar(char c) {
    switch (c) {
      case '"':
        return appendCanonicalString(in_, pos_, out_, scratch_);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return appendCanonicalNumber(in_, pos_, out_);  // false unless '-' or a digit
    }
  }

  bool literal(std::string_view word) {
    if (in_.substr(pos_, word.size()) != word) return false;
    out_ += word;
    pos_ += word.size();
    return true;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  std::string out_;
  std::vector<Frame> stack_;
  std::vector<Member> members_;
  std::string scratch_;  // reused by reorder() and by strings with escapes
};

}  // namespace

std::optional<std::string> canonicalJsonText(std::string_view text) { return Canonicalizer(text).run(); }

}  // namespace idem::fp
