#pragma once
// Exports (PDF, Markdown, HTML) are laid out and written off the GUI thread, on a pool of
// their own.
#include <QCoreApplication>
#include <QObject>
#include <QPointer>
#include <QThreadPool>
#include <functional>
#include <utility>

namespace idem::ui {

/// The pool that writes exports. Kept apart from Qt's global pool on purpose: the raster paint
/// engine fills large areas on the global pool and the GUI thread waits for those fills, so
/// exports queued there would stall painting.
QThreadPool& fileWorkPool();

/// Runs `work` on the file pool and hands its result to `done` on the GUI thread, unless
/// `owner` has been destroyed by then.
template <class Result>
void runFileWork(QObject* owner, std::function<Result()> work, std::function<void(Result)> done) {
  QPointer<QObject> alive(owner);
  fileWorkPool().start([alive, work = std::move(work), done = std::move(done)] {
    Result result = work();
    QMetaObject::invokeMethod(
        qApp, [alive, done, result = std::move(result)] { if (alive) done(result); }, Qt::QueuedConnection);
  });
}

}  // namespace idem::ui
