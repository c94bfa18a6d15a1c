// This process's real memory as the kernel and the C library see it, for tests that show memory
// handed back (not only pipevd's own counters).
#pragma once

namespace pipevd::test {

struct ProcessMemory {
  long heap_in_use = 0;  // malloc's bytes in use, every arena and mmapped chunk (mallinfo2)
  long rss_anon = 0;     // private resident bytes (RssAnon of /proc/self/status)
  long rss_shmem = 0;    // resident shared-memory bytes this process maps (RssShmem)
  long dev_shm = 0;      // bytes of /dev/shm files this process maps (/proc/self/maps)
};

// Freed heap memory first handed back to the kernel (malloc_trim), so that what stays resident is
// what someone still holds.
ProcessMemory trimmed_process_memory();

}  // namespace pipevd::test
