// The connection pool against a real server: a thread gets back the connection it used last
// (so each server backend keeps talking to one client thread), and the pool still shares
// connections when that one is taken.
#include <QtTest>
#include <latch>
#include <thread>

#include "core/store/pool.h"
#include "tests/support/testdb.h"

using namespace idem;

namespace {
int backendPid(store::Pool::Lease& lease) { return PQbackendPID(lease.conn().raw()); }
}  // namespace

class TestPool : public QObject {
  Q_OBJECT

 private slots:
  void aThreadGetsItsOwnConnectionBack() {
    test::TestDatabase db("pool_affinity");
    store::Pool pool(db.conninfo(), 4);
    int firstA = 0, firstB = 0, againA = 0, againB = 0;
    std::latch bothHold(2), aReleased(1), bReleased(1);
    std::thread a([&] {
      {
        auto lease = pool.acquire();
        firstA = backendPid(lease);
        bothHold.arrive_and_wait();
      }
      aReleased.count_down();
      bReleased.wait();  // B's connection is now the most recently returned one
      auto lease = pool.acquire();
      againA = backendPid(lease);
    });
    std::thread b([&] {
      {
        auto lease = pool.acquire();
        firstB = backendPid(lease);
        bothHold.arrive_and_wait();
        aReleased.wait();
      }
      bReleased.count_down();
    });
    a.join();
    b.join();
    QVERIFY(firstA != 0 && firstB != 0 && firstA != firstB);
    QCOMPARE(againA, firstA);  // not B's, although B's went back last
    {
      std::thread c([&] {
        auto lease = pool.acquire();  // a thread with no history takes any idle connection
        againB = backendPid(lease);
      });
      c.join();
    }
    QVERIFY(againB == firstA || againB == firstB);
    QCOMPARE(pool.stats().size, 2);  // no connection opened beyond the two
  }

  void anotherThreadMayUseItWhileItIsIdle() {
    test::TestDatabase db("pool_sharing");
    store::Pool pool(db.conninfo(), 1);
    int mine = 0, theirs = 0;
    {
      auto lease = pool.acquire();
      mine = backendPid(lease);
    }
    std::thread other([&] {
      auto lease = pool.acquire();
      theirs = backendPid(lease);
    });
    other.join();
    QCOMPARE(theirs, mine);  // the only connection: shared, not reserved
    QCOMPARE(pool.stats().size, 1);
  }
};

QTEST_GUILESS_MAIN(TestPool)
#include "tst_pool.moc"
