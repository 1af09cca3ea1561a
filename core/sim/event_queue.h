#pragma once
// A 4-ary min-heap: the engine's priority queue. Shallower than a binary heap (half the
// levels), so a pop touches fewer cache lines; the order is whatever `Before` says, so runs
// do not depend on the standard library's heap algorithm.
#include <cstddef>
#include <utility>
#include <vector>

namespace idem::sim {

template <typename T, typename Before>
class QuaternaryHeap final {
 public:
  [[nodiscard]] bool empty() const { return m_items.empty(); }
  [[nodiscard]] std::size_t size() const { return m_items.size(); }
  [[nodiscard]] const T& top() const { return m_items.front(); }

  void push(const T& item) {
    std::size_t i = m_items.size();
    m_items.push_back(item);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!m_before(item, m_items[parent])) break;
      m_items[i] = m_items[parent];
      i = parent;
    }
    m_items[i] = item;
  }

  void pop() {
    const T last = m_items.back();
    m_items.pop_back();
    const std::size_t n = m_items.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (m_before(m_items[c], m_items[best])) best = c;
      if (!m_before(m_items[best], last)) break;
      m_items[i] = m_items[best];
      i = best;
    }
    m_items[i] = last;
  }

 private:
  std::vector<T> m_items;
  Before m_before;
};

}  // namespace idem::sim
