// The pending lists of lazy GPU execution (core/pending.h), driven with plain Work items
// so that they run without a GPU: order, budgets, the flush's error handling, and the
// "in a flush" flag that keeps a kernel's own reads from flushing again.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/pending.h"
#include "core/tensor_impl.h"
#include "ops/fusion_internal.h"

namespace lucid {
namespace {

// A GPU index no test of the suite touches, so its list is this file's own.
constexpr int kDevice = pending::kMaxDevices - 1;

struct Step final : pending::Work {
  std::vector<int>* log;
  int id;
  bool fail;
  Step(std::vector<int>* l, int i, bool f = false) : log(l), id(i), fail(f) {}
  void run() override {
    log->push_back(id);
    if (fail) throw IndexError("step " + std::to_string(id) + " failed");
  }
  const char* name() const override { return "step"; }
  uint64_t signature() const override { return uint64_t(id) + 1; }
};

void record(std::vector<int>& log, int id, bool fail = false, size_t bytes = 0) {
  pending::record(kDevice, std::make_unique<Step>(&log, id, fail), bytes);
}

TEST(Pending, RunsInProgramOrderAtAFlush) {
  std::vector<int> log;
  for (int i = 0; i < 5; ++i) record(log, i);
  EXPECT_TRUE(log.empty());
  EXPECT_TRUE(pending::has_pending(kDevice));
  EXPECT_EQ(pending::stats(kDevice).ops, 5u);
  const size_t flushes = pending::stats(kDevice).flushes;
  pending::flush(kDevice);
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(pending::has_pending(kDevice));
  EXPECT_EQ(pending::stats(kDevice).flushes, flushes + 1);
  pending::flush(kDevice);  // nothing recorded: not counted
  EXPECT_EQ(pending::stats(kDevice).flushes, flushes + 1);
}

TEST(Pending, OpBudgetFlushes) {
  std::vector<int> log;
  for (size_t i = 0; i < pending::kMaxPendingOps; ++i) record(log, int(i));
  EXPECT_EQ(log.size(), pending::kMaxPendingOps);  // the last record ran the list
  EXPECT_FALSE(pending::has_pending(kDevice));
}

TEST(Pending, ByteBudgetFlushes) {
  std::vector<int> log;
  record(log, 0, false, pending::kMaxPendingBytes / 2);
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(pending::stats(kDevice).bytes, pending::kMaxPendingBytes / 2);
  record(log, 1, false, pending::kMaxPendingBytes / 2);
  EXPECT_EQ(log, (std::vector<int>{0, 1}));
  EXPECT_EQ(pending::stats(kDevice).bytes, 0u);
}

TEST(Pending, AnErrorIsRaisedAfterTheRestHasRunWithItsTypeAndOp) {
  std::vector<int> log;
  record(log, 0);
  record(log, 1, true);
  record(log, 2);
  record(log, 3, true);  // a second error: the first is the one raised
  try {
    pending::flush(kDevice);
    FAIL() << "the flush raised nothing";
  } catch (const IndexError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("step 1 failed"), std::string::npos) << what;
    EXPECT_NE(what.find("raised by step"), std::string::npos) << what;
    EXPECT_NE(what.find("LUCID_LAZY=0"), std::string::npos) << what;
  }
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(pending::has_pending(kDevice));
  record(log, 4);  // the list works afterwards
  pending::flush(kDevice);
  EXPECT_EQ(log.back(), 4);
}

// A step that records and flushes from inside a flush, as a kernel built from other
// ops (or one reading data_ptr) would: the inner flush is a no-op and the new record
// waits for the next flush, so nothing runs out of order or recursively.
struct Reentrant final : pending::Work {
  std::vector<int>* log;
  explicit Reentrant(std::vector<int>* l) : log(l) {}
  void run() override {
    EXPECT_TRUE(pending::in_flush());
    EXPECT_FALSE(pending::recording(kDevice));  // launch runs kernels at once inside a flush
    pending::flush(kDevice);
    log->push_back(100);
  }
  const char* name() const override { return "reentrant"; }
};

TEST(Pending, AFlushInsideAFlushDoesNothing) {
  std::vector<int> log;
  record(log, 0);
  pending::record(kDevice, std::make_unique<Reentrant>(&log), 0);
  record(log, 1);
  EXPECT_FALSE(pending::in_flush());
  pending::flush(kDevice);
  EXPECT_EQ(log, (std::vector<int>{0, 100, 1}));
  EXPECT_FALSE(pending::in_flush());
}

TEST(Pending, TurningLazinessOffRunsWhatIsRecorded) {
  const bool was = pending::lazy_enabled();
  pending::set_lazy(true);
  EXPECT_TRUE(pending::recording(kDevice));
  std::vector<int> log;
  record(log, 7);
  pending::set_lazy(false);
  EXPECT_EQ(log, (std::vector<int>{7}));
  EXPECT_FALSE(pending::recording(kDevice));
  pending::set_lazy(was);
}

// Copies of a storage held by recorded calls are not sharers (TensorImpl::storage_is_shared):
// out= may still resize a tensor a recorded call reads.
TEST(Pending, SnapshotsAreNotSharers) {
  TensorPtr t = TensorImpl::empty({4}, Dtype::F32, Device::cpu());
  EXPECT_FALSE(t->storage_is_shared());
  storage_base(t->storage()).version->pending_uses.fetch_add(1);
  {
    auto snapshot = std::make_shared<TensorImpl>(t->storage(), t->meta());
    EXPECT_FALSE(t->storage_is_shared());
    TensorPtr view = TensorImpl::view_of(*t, {2}, {4}, 0);
    EXPECT_TRUE(t->storage_is_shared());
  }
  storage_base(t->storage()).version->pending_uses.fetch_sub(1);
  EXPECT_FALSE(t->storage_is_shared());
}

// A backend's ListRunner (the CUDA graphs of Note [Flush graphs]) stood in for by one
// that does what the test says and notes the signatures it was shown.
struct FakeRunner {
  static inline pending::ListRun answer = pending::ListRun::Declined;
  static inline bool runs = false;  // runs the list before answering
  static inline std::vector<uint64_t> signatures;
  static inline std::vector<bool> clean;  // what run_list returned
  static pending::ListRun run(int device, uint64_t signature, size_t calls, bool (*run_list)(void*), void* ctx) {
    EXPECT_EQ(device, kDevice);
    EXPECT_GE(calls, pending::kMinGraphCalls);
    EXPECT_TRUE(pending::in_flush());
    signatures.push_back(signature);
    if (runs) clean.push_back(run_list(ctx));
    return answer;
  }
};

struct WithRunner {
  pending::ListRunner was;
  bool graphs_were = pending::graphs_enabled();
  WithRunner(pending::ListRun answer, bool runs) : was(pending::set_list_runner(&FakeRunner::run)) {
    FakeRunner::answer = answer;
    FakeRunner::runs = runs;
    FakeRunner::signatures.clear();
    FakeRunner::clean.clear();
    pending::set_graphs_enabled(true);
  }
  ~WithRunner() {
    pending::set_list_runner(was);
    pending::set_graphs_enabled(graphs_were);
  }
};

TEST(Pending, ARunnerThatRanTheListRunsItOnce) {
  WithRunner with(pending::ListRun::Ran, true);
  std::vector<int> log;
  const size_t runs = pending::stats(kDevice).graph_runs;
  for (int i = 0; i < 4; ++i) record(log, i, i == 2);
  EXPECT_THROW(pending::flush(kDevice), IndexError);  // the error of a call still comes out
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(pending::stats(kDevice).graph_runs, runs + 1);
  EXPECT_EQ(FakeRunner::clean, (std::vector<bool>{false}));  // the runner was told a call raised
}

TEST(Pending, AnAbandonedRunIsRunAgainCallByCall) {
  WithRunner with(pending::ListRun::Abandoned, true);
  std::vector<int> log;
  const size_t abandoned = pending::stats(kDevice).graph_abandoned;
  for (int i = 0; i < 3; ++i) record(log, i);
  pending::flush(kDevice);
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(pending::stats(kDevice).graph_abandoned, abandoned + 1);
  // An error of the abandoned attempt is not raised twice: only the second run's.
  log.clear();
  for (int i = 0; i < 3; ++i) record(log, i, i == 1);
  try {
    pending::flush(kDevice);
    FAIL() << "the flush raised nothing";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("step 1 failed"), std::string::npos);
  }
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(Pending, DeclinedShortOrSwitchedOffListsRunCallByCall) {
  WithRunner with(pending::ListRun::Declined, false);
  std::vector<int> log;
  for (int i = 0; i < 3; ++i) record(log, i);
  pending::flush(kDevice);
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(FakeRunner::signatures.size(), 1u);
  for (size_t i = 0; i + 1 < pending::kMinGraphCalls; ++i) record(log, 9);
  pending::flush(kDevice);  // too short to be shown to the runner
  EXPECT_EQ(FakeRunner::signatures.size(), 1u);
  pending::set_graphs_enabled(false);
  for (int i = 0; i < 3; ++i) record(log, i);
  pending::flush(kDevice);
  EXPECT_EQ(FakeRunner::signatures.size(), 1u);
  EXPECT_EQ(log.size(), 3 + (pending::kMinGraphCalls - 1) + 3);
}

TEST(Pending, EqualListsHaveEqualSignatures) {
  WithRunner with(pending::ListRun::Declined, false);
  std::vector<int> log;
  for (const std::vector<int>& ids : {std::vector<int>{1, 2, 3}, {1, 2, 3}, {1, 3, 2}, {1, 2, 3, 4}}) {
    for (int id : ids) record(log, id);
    pending::flush(kDevice);
  }
  const std::vector<uint64_t>& s = FakeRunner::signatures;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], s[1]);
  EXPECT_NE(s[0], s[2]);  // order matters
  EXPECT_NE(s[0], s[3]);
}

TEST(Pending, AStreamTurnRunsTheListFirst) {
  std::vector<int> log;
  record(log, 5);
  {
    pending::StreamTurn turn(kDevice);
    EXPECT_EQ(log, (std::vector<int>{5}));
    record(log, 6);
    pending::flush(kDevice);  // the thread holding the turn may still flush
    EXPECT_EQ(log, (std::vector<int>{5, 6}));
  }
}

// The fusion passes' rewriting of a list (ops/fusion_internal.h): replacements in list
// order take the places of their calls, a replacement without work drops its calls, and
// the calls between them keep their order.
TEST(Pending, SpliceReplacesRunsOfCallsInOrder) {
  std::vector<int> log;
  std::vector<std::unique_ptr<pending::Work>> list;
  for (int i = 0; i < 8; ++i) list.push_back(std::make_unique<Step>(&log, i));
  std::vector<ops::Replacement> replacements;
  replacements.push_back({1, 2, std::make_unique<Step>(&log, 12)});  // 1, 2 -> 12
  replacements.push_back({4, 1, nullptr});                            // 4 dropped
  replacements.push_back({6, 2, std::make_unique<Step>(&log, 67)});  // 6, 7 -> 67
  ops::splice(list, replacements);
  for (auto& w : list) w->run();
  EXPECT_EQ(log, (std::vector<int>{0, 12, 3, 5, 67}));
  std::vector<ops::Replacement> none;
  ops::splice(list, none);
  EXPECT_EQ(list.size(), 5u);
}

}  // namespace
}  // namespace lucid
