{
  "targets": [
    {
      "target_name": "mount_syscalls",
      "sources": ["native/mount-syscalls.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
