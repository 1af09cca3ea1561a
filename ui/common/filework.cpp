#include "ui/common/filework.h"

namespace idem::ui {

QThreadPool& fileWorkPool() {
  // One writer is enough: an agent exports one document at a time, and a second waits its turn.
  static QThreadPool* pool = [] {
    auto* p = new QThreadPool;  // lives as long as the process: a pool thread may outlast any owner
    p->setMaxThreadCount(1);
    return p;
  }();
  return *pool;
}

}  // namespace idem::ui
