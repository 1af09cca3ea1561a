// The connection pool against a real server: a thread gets back the connection it used last
// (so each server backend keeps talking to one client thread), and the pool still shares
// connections when that one is taken; warming up opens the pool's connections before the first
// burst needs them, and gives up quietly when the store is away.
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
  void warmUpOpensThePoolsConnectionsAhead() {
    test::TestDatabase db("pool_warmup");
    store::Pool pool(db.conninfo(), 4);
    QCOMPARE(pool.warmUp(8), 4);  // never past the pool's size
    auto stats = pool.stats();
    QCOMPARE(stats.size, 4);
    QCOMPARE(stats.idle, 4);
    auto admin = db.connect();
    const auto backends = [&] {
      return admin
          .exec("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
          .integer(0, "n");
    };
    QCOMPARE(backends(), 4LL);  // the server has them, not only our bookkeeping
    QCOMPARE(pool.warmUp(4), 0);  // already warm
    {
      auto lease = pool.acquire();  // a warm connection, not a fifth one
      QVERIFY(lease.reused());
      QCOMPARE(lease.conn().exec("SELECT 1 AS one").integer(0, "one"), 1LL);
    }
    QCOMPARE(pool.stats().size, 4);

    std::stop_source stopped;
    stopped.request_stop();
    store::Pool other(db.conninfo(), 4);
    QCOMPARE(other.warmUp(4, stopped.get_token()), 0);
    QCOMPARE(other.stats().size, 0);
  }

  void warmUpGivesUpWhenTheStoreIsAway() {
    store::Pool pool("host=/nonexistent-idem-socket-dir port=5432 user=idem dbname=postgres connect_timeout=2", 4);
    QCOMPARE(pool.warmUp(4), 0);
    QCOMPARE(pool.stats().size, 0);
    QCOMPARE(pool.stats().connectFailures, 1LL);
    QVERIFY_THROWS_EXCEPTION(pg::Unavailable, (void)pool.acquire());  // requests still find out by themselves
  }
};

QTEST_GUILESS_MAIN(TestPool)
#include "tst_pool.moc"
