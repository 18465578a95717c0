#include "harness_flags.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tidemark {
namespace {

bool Value(const char* arg, const char* name, const char** value) {
  size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

bool ToInt(const char* name, const char* text, int64_t min, int64_t* out) {
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < min) {
    std::fprintf(stderr, "harness: %s=%s: expected an integer >= %lld\n", name, text,
                 static_cast<long long>(min));
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseHarnessFlags(int* argc, char** argv, HarnessFlags* flags) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const char* v = nullptr;
    int64_t n = 0;
    if (Value(argv[i], "--tm_db", &v)) {
      flags->db = v;
    } else if (Value(argv[i], "--tm_threads", &v)) {
      if (!ToInt("--tm_threads", v, 1, &n)) return false;
      flags->threads = static_cast<int>(n);
    } else if (Value(argv[i], "--tm_keys", &v)) {
      if (!ToInt("--tm_keys", v, 1, &flags->keys)) return false;
    } else if (Value(argv[i], "--tm_cache_size", &v)) {
      if (!ToInt("--tm_cache_size", v, 0, &flags->cache_size)) return false;
    } else if (Value(argv[i], "--tm_compression", &v)) {
      flags->compression = v;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  if (flags->db.empty()) {
    std::fprintf(stderr, "harness: --tm_db=DIR is required (the database folder)\n");
    return false;
  }
  return true;
}

}  // namespace tidemark
