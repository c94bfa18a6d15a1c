// How much more host memory this process may take before the kernel's memory controller stops it:
// the cgroup limit a batch system (Slurm's cgroup plugin, a container) puts on the job, less what
// the group already uses. Free memory as /proc/meminfo reports it is not a limit (page cache can
// be reclaimed, and a virtual machine may grow its memory as it is touched), so only the cgroup's
// limit is a reason to refuse a call.
#pragma once
#include <string>

namespace pipevd {

// Bytes this process's memory cgroup (and each of its ancestors) may still grow by, the least of
// them; -1 where no limit is set or none can be read. cgroup v1's memory controller is read where
// it is mounted (hybrid hierarchies keep memory there), v2's unified hierarchy otherwise.
long cgroup_memory_room();

// The same from the text of /proc/self/cgroup and the cgroup file system's mount point (tests).
// A group's directory is the mount point plus the group's path, or the mount point itself where
// that is missing (a cgroup namespace shows its own group as the root).
long cgroup_memory_room(const std::string& proc_self_cgroup, const std::string& mount);

}  // namespace pipevd
