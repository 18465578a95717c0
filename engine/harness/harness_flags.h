// Tidemark's own flags (--tm_*), taken out of argv before Google Benchmark sees it.
#pragma once

#include <cstdint>
#include <string>

namespace tidemark {

struct HarnessFlags {
  std::string db;                  // --tm_db: the database folder (under Tidemark's data_dir)
  int threads = 1;                 // --tm_threads: threads of the multi-threaded cases
  int64_t keys = 10000;            // --tm_keys: 1 KB documents loaded before the read cases
  int64_t cache_size = 8 << 20;    // --tm_cache_size: block cache bytes
  std::string compression = "snappy";  // --tm_compression: none|snappy|lz4|zstd|zlib
};

// Parses and removes --tm_* arguments; returns false (and prints why) on a bad value.
bool ParseHarnessFlags(int* argc, char** argv, HarnessFlags* flags);

}  // namespace tidemark
