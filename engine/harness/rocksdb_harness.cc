// Google Benchmark cases over RocksDB's public API, as storage-engine teams report them:
// Put of a 1 KB "small document" and a 100 KB "medium document", Get hit and miss, MultiGet,
// WriteBatch of 100/500/1000 entries against the same entries one Put at a time (items/s),
// and iterator scans. Every case reports items/s and bytes/s and is timed by wall clock
// (UseRealTime), so with --tm_threads=N the rates are aggregates over the N threads.
//
// One database per process (--tm_db), loaded with --tm_keys documents of 1 KB before any case
// runs; the read cases run first, before the write cases add data.
#include <benchmark/benchmark.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness_flags.h"

namespace {

constexpr size_t kSmallDoc = 1024;
constexpr size_t kMediumDoc = 100 * 1024;
constexpr size_t kEntryValue = 100;  // WriteBatch/PutLoop entries, db_bench's default value size

tidemark::HarnessFlags g_flags;
rocksdb::DB* g_db = nullptr;
std::atomic<uint64_t> g_write_seq{0};  // unique keys for writers across threads and cases

// 16-byte keys: a 3-letter prefix and 13 digits.
std::string Key(const char* prefix, uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3s%013llu", prefix, static_cast<unsigned long long>(n));
  return buf;
}

// Lower-case letters from a xorshift stream: compresses about as well as text does.
std::string Document(size_t size, uint64_t seed) {
  std::string doc(size, 'a');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (char& c : doc) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>('a' + x % 26);
  }
  return doc;
}

bool Check(benchmark::State& state, const rocksdb::Status& s, const char* what) {
  if (s.ok()) return true;
  state.SkipWithError((std::string(what) + ": " + s.ToString()).c_str());
  return false;
}

void BM_Put(benchmark::State& state) {
  const std::string doc = Document(state.range(0), state.thread_index() + 1);
  rocksdb::WriteOptions wo;
  for (auto _ : state) {
    if (!Check(state, g_db->Put(wo, Key("put", g_write_seq++), doc), "Put")) break;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void BM_GetHit(benchmark::State& state) {
  std::mt19937_64 rng(301 + state.thread_index());
  rocksdb::ReadOptions ro;
  std::string value;
  int64_t bytes = 0;
  for (auto _ : state) {
    if (!Check(state, g_db->Get(ro, Key("doc", rng() % g_flags.keys), &value), "Get hit")) break;
    bytes += value.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

void BM_GetMiss(benchmark::State& state) {
  std::mt19937_64 rng(301 + state.thread_index());
  rocksdb::ReadOptions ro;
  std::string value;
  for (auto _ : state) {
    rocksdb::Status s = g_db->Get(ro, Key("mis", rng() % g_flags.keys), &value);
    if (!s.IsNotFound() && !Check(state, s, "Get miss")) break;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_MultiGet(benchmark::State& state) {
  const size_t n = state.range(0);
  std::mt19937_64 rng(301 + state.thread_index());
  std::vector<std::string> keys(n);
  std::vector<rocksdb::Slice> slices(n);
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  rocksdb::ReadOptions ro;
  int64_t bytes = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) {
      keys[i] = Key("doc", rng() % g_flags.keys);
      slices[i] = keys[i];
      values[i].Reset();
    }
    g_db->MultiGet(ro, g_db->DefaultColumnFamily(), n, slices.data(), values.data(),
                   statuses.data());
    for (size_t i = 0; i < n; ++i) bytes += values[i].size();
    if (!Check(state, statuses[0], "MultiGet")) break;
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(bytes);
}

void BM_WriteBatch(benchmark::State& state) {
  const size_t n = state.range(0);
  const std::string value = Document(kEntryValue, 7);
  rocksdb::WriteOptions wo;
  for (auto _ : state) {
    rocksdb::WriteBatch batch;
    for (size_t i = 0; i < n; ++i) batch.Put(Key("wb_", g_write_seq++), value);
    if (!Check(state, g_db->Write(wo, &batch), "Write(batch)")) break;
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * kEntryValue);
}

void BM_PutLoop(benchmark::State& state) {  // the same entries as BM_WriteBatch, one Put each
  const size_t n = state.range(0);
  const std::string value = Document(kEntryValue, 7);
  rocksdb::WriteOptions wo;
  for (auto _ : state) {
    rocksdb::Status s;
    for (size_t i = 0; i < n && s.ok(); ++i) s = g_db->Put(wo, Key("pl_", g_write_seq++), value);
    if (!Check(state, s, "Put")) break;
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * kEntryValue);
}

void BM_Scan(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::mt19937_64 rng(301 + state.thread_index());
  std::unique_ptr<rocksdb::Iterator> it(g_db->NewIterator(rocksdb::ReadOptions()));
  int64_t items = 0, bytes = 0;
  for (auto _ : state) {
    it->Seek(Key("doc", rng() % g_flags.keys));
    for (int64_t i = 0; i < n && it->Valid(); ++i, it->Next()) {
      bytes += it->value().size();
      ++items;
    }
    if (!Check(state, it->status(), "Iterator")) break;
  }
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(bytes);
  state.SetComplexityN(n);
}

// Opening a database that does not exist fails on purpose: it checks that an engine error
// reaches the results as a failed row (filter ErrorProbe; the micro suite leaves it out).
void BM_ErrorProbe(benchmark::State& state) {
  rocksdb::Options options;
  for (auto _ : state) {
    rocksdb::DB* db = nullptr;
    if (!Check(state, rocksdb::DB::OpenForReadOnly(options, g_flags.db + "/missing", &db),
               "OpenForReadOnly")) break;
    delete db;
  }
}

rocksdb::CompressionType Compression(const std::string& name) {
  if (name == "none") return rocksdb::kNoCompression;
  if (name == "lz4") return rocksdb::kLZ4Compression;
  if (name == "zstd") return rocksdb::kZSTD;
  if (name == "zlib") return rocksdb::kZlibCompression;
  return rocksdb::kSnappyCompression;
}

rocksdb::Status OpenAndLoad() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.compression = Compression(g_flags.compression);
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(g_flags.cache_size);
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::Status s = rocksdb::DestroyDB(g_flags.db, options);  // a fresh database per process
  if (s.ok()) s = rocksdb::DB::Open(options, g_flags.db, &g_db);
  rocksdb::WriteOptions wo;
  for (int64_t i = 0; s.ok() && i < g_flags.keys; ++i) {
    s = g_db->Put(wo, Key("doc", i), Document(kSmallDoc, i));
  }
  if (s.ok()) s = g_db->Flush(rocksdb::FlushOptions());  // reads come from table files
  return s;
}

void Register() {
  const int t = g_flags.threads;
  // Reads first: the writers below grow the database.
  benchmark::RegisterBenchmark("Get/hit", BM_GetHit)->Threads(t)->UseRealTime();
  benchmark::RegisterBenchmark("Get/miss", BM_GetMiss)->Threads(t)->UseRealTime();
  benchmark::RegisterBenchmark("MultiGet", BM_MultiGet)->ArgName("keys")->Arg(64)->Threads(t)
      ->UseRealTime();
  benchmark::RegisterBenchmark("Scan", BM_Scan)->ArgName("keys")->Arg(10)->Arg(100)->Arg(1000)
      ->Threads(t)->UseRealTime()->Complexity(benchmark::oN);
  benchmark::RegisterBenchmark("Put", BM_Put)->ArgName("doc_bytes")->Arg(kSmallDoc)
      ->Arg(kMediumDoc)->Threads(t)->UseRealTime();
  for (auto* name : {"WriteBatch", "PutLoop"}) {
    auto fn = std::string(name) == "WriteBatch" ? BM_WriteBatch : BM_PutLoop;
    benchmark::RegisterBenchmark(name, fn)->ArgName("entries")->Arg(100)->Arg(500)->Arg(1000)
        ->Threads(1)->UseRealTime();
  }
  benchmark::RegisterBenchmark("ErrorProbe/open_missing_db", BM_ErrorProbe)->Threads(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (!tidemark::ParseHarnessFlags(&argc, argv, &g_flags)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  rocksdb::Status s = OpenAndLoad();
  if (!s.ok()) {
    std::fprintf(stderr, "harness: cannot prepare %s: %s\n", g_flags.db.c_str(),
                 s.ToString().c_str());
    return 1;
  }
  benchmark::AddCustomContext("rocksdb_version", std::to_string(ROCKSDB_MAJOR) + "." +
                                                     std::to_string(ROCKSDB_MINOR) + "." +
                                                     std::to_string(ROCKSDB_PATCH));
  benchmark::AddCustomContext("tm_keys", std::to_string(g_flags.keys));
  benchmark::AddCustomContext("tm_threads", std::to_string(g_flags.threads));
  Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  delete g_db;
  return 0;
}
