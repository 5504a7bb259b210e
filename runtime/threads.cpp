// The model's thread pool: POSIX threads started at the first parallel run (never at load
// time), joined by the destructor. The threads of a region each work through their own
// contiguous share of its parts, then take over what is left of the others' (ClaimedRanges):
// cores that run at different speeds (a busy sibling hyperthread, a shared virtual machine,
// big and little cores) share the work by speed, not in equal shares that wait for the
// slowest.
#include "dlc_kernels.h"
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace dlc {
namespace rt {

struct ThreadPool {
  explicit ThreadPool(int threads) : threads(threads), owner(getpid()) {}

  const int threads;
  // The process whose workers these are: a forked child has none of them, and runs serially.
  const pid_t owner;
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
  pthread_t workers[kMaxThreads];
  int started = 0;
  // A region is handed over without locks: the caller writes task, context and claims, then
  // advances `generation`, which workers poll; each worker decrements `pending` when done,
  // which the caller polls. The mutex and condition variables serve only threads that gave up
  // polling and sleep: `sleepers` and `callerSleeps` say whether anyone must be woken (both
  // sides write their flag, then read the other's, all sequentially consistent, so a wakeup
  // cannot be missed).
  std::atomic<unsigned long> generation{0};
  std::atomic<int> pending{0}, sleepers{0};
  std::atomic<bool> callerSleeps{false}, stopping{false};
  ClaimedRanges claims;
  int participants = 0; // the caller and workers 1..participants-1
  void (*task)(void *, int) = nullptr;
  void *context = nullptr;
  int widestRun = 1; // for takeWidestRun (profiles)
};

namespace {

thread_local ThreadPool *currentPool = nullptr;

// A model's ops come one after another, and waking a sleeping thread costs tens of
// microseconds: a worker that finished its part, and a caller waiting for the workers, first
// poll (about a millisecond) before they sleep.
constexpr int kSpinPolls = 30000;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `waiting()` up to kSpinPolls times; true if it still holds. The poller yields its CPU
// now and then: the thread it waits for may have been woken onto the same CPU (Linux places
// a wakee beside its waker), and would otherwise only run when the poller's time slice ends.
template <typename Waiting> bool spinWhile(Waiting waiting) {
  constexpr int kPollsPerYield = 256;
  for (int poll = 0; poll < kSpinPolls; ++poll) {
    if (!waiting())
      return false;
    if (poll % kPollsPerYield == kPollsPerYield - 1)
      sched_yield();
    else
      cpuRelax();
  }
  return waiting();
}

void runParts(ThreadPool &pool, int participant) {
  for (int64_t part; (part = pool.claims.claim(participant)) >= 0;)
    pool.task(pool.context, int(part));
}

struct WorkerStart {
  ThreadPool *pool;
  int part;
};

void *workerMain(void *arg) {
  WorkerStart start = *static_cast<WorkerStart *>(arg);
  delete static_cast<WorkerStart *>(arg);
  ThreadPool &pool = *start.pool;
  unsigned long seen = 0;
  for (;;) {
    auto idle = [&] { return pool.generation.load() == seen && !pool.stopping.load(); };
    if (spinWhile(idle)) {
      pthread_mutex_lock(&pool.mutex);
      ++pool.sleepers;
      while (idle())
        pthread_cond_wait(&pool.wake, &pool.mutex);
      --pool.sleepers;
      pthread_mutex_unlock(&pool.mutex);
    }
    if (pool.stopping.load())
      break;
    seen = pool.generation.load();
    if (start.part < pool.participants)
      runParts(pool, start.part);
    if (pool.pending.fetch_sub(1) == 1 && pool.callerSleeps.load()) {
      pthread_mutex_lock(&pool.mutex);
      pthread_cond_signal(&pool.done);
      pthread_mutex_unlock(&pool.mutex);
    }
  }
  return nullptr;
}

// Kernels keep their GEMM blocks on the stack (about 230 KiB): workers get room for that
// whatever the platform's default thread stack is.
constexpr size_t kWorkerStackBytes = size_t(4) << 20;

// Starts the workers a region needs; a worker that cannot be started leaves its part to the
// caller, so a region always completes.
void startWorkers(ThreadPool &pool) {
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0)
    return;
  pthread_attr_setstacksize(&attributes, kWorkerStackBytes);
  while (pool.started + 1 < pool.threads) {
    auto *start = new (std::nothrow) WorkerStart{&pool, pool.started + 1};
    if (!start)
      break;
    if (pthread_create(&pool.workers[pool.started], &attributes, workerMain, start) != 0) {
      delete start;
      break;
    }
    ++pool.started;
  }
  pthread_attr_destroy(&attributes);
}

int parseThreads(const char *text) {
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  return *end == '\0' && value > 0 ? int(value < kMaxThreads ? value : kMaxThreads) : 0;
}

} // namespace

int defaultThreadCount() {
  if (int fromEnv = parseThreads(std::getenv("DLC_THREADS")))
    return fromEnv;
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0)
    return 1;
  int count = CPU_COUNT(&cpus);
  return count < 1 ? 1 : count < kMaxThreads ? count : kMaxThreads;
}

ThreadPool *createThreadPool(int threads) {
  if (threads <= 1)
    return nullptr;
  return new (std::nothrow) ThreadPool(threads < kMaxThreads ? threads : kMaxThreads);
}

void destroyThreadPool(ThreadPool *pool) {
  if (!pool)
    return;
  if (getpid() != pool->owner) {
    // A forked child: the workers belong to the parent; only the memory is ours.
    delete pool;
    return;
  }
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (int i = 0; i < pool->started; ++i)
    pthread_join(pool->workers[i], nullptr);
  pthread_mutex_destroy(&pool->mutex);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->done);
  delete pool;
}

ThreadScope::ThreadScope(ThreadPool *pool) : previous_(currentPool) { currentPool = pool; }
ThreadScope::~ThreadScope() { currentPool = previous_; }

int activeThreadCount() { return currentPool ? currentPool->threads : 1; }

int takeWidestRun() {
  if (!currentPool)
    return 1;
  int widest = currentPool->widestRun;
  currentPool->widestRun = 1;
  return widest;
}

void parallelRun(int parts, void (*task)(void *, int), void *context) {
  ThreadPool *pool = currentPool;
  if (!pool || parts <= 1 || getpid() != pool->owner) {
    for (int part = 0; part < parts; ++part)
      task(context, part);
    return;
  }
  // A nested region inside a part runs serially, since workers have no current pool.
  currentPool = nullptr;
  if (pool->started + 1 < pool->threads)
    startWorkers(*pool);
  const int helpers = parts - 1 < pool->started ? parts - 1 : pool->started;
  if (helpers + 1 > pool->widestRun)
    pool->widestRun = helpers + 1;
  // The caller and workers 1..helpers share the parts; the other workers have nothing to
  // do this time.
  pool->task = task;
  pool->participants = helpers + 1;
  pool->context = context;
  pool->claims.reset(parts, helpers + 1);
  pool->pending.store(pool->started);
  pool->generation.fetch_add(1);
  if (pool->sleepers.load() > 0) {
    pthread_mutex_lock(&pool->mutex);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
  }
  runParts(*pool, 0);
  if (spinWhile([&] { return pool->pending.load() > 0; })) {
    pthread_mutex_lock(&pool->mutex);
    pool->callerSleeps = true;
    while (pool->pending.load() > 0)
      pthread_cond_wait(&pool->done, &pool->mutex);
    pool->callerSleeps = false;
    pthread_mutex_unlock(&pool->mutex);
  }
  currentPool = pool;
}

} // namespace rt
} // namespace dlc
