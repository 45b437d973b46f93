{
  "targets": [
    {
      "target_name": "mount_syscalls",
      "sources": ["native/mount-syscalls.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    },
    {
      "target_name": "process_reaper",
      "sources": ["native/process-reaper.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
