{
  "targets": [
    {
      "target_name": "boxsync_inotify",
      "sources": ["native/inotify.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "conditions": [["OS != 'linux'", {"type": "none", "sources": []}]]
    },
    {
      "target_name": "boxsync_malloc",
      "sources": ["native/malloc.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "conditions": [["OS != 'linux'", {"type": "none", "sources": []}]]
    },
    {
      "target_name": "boxsync_walk",
      "sources": ["native/walk.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "conditions": [["OS != 'linux'", {"type": "none", "sources": []}]]
    },
    {
      "target_name": "boxsync_syncfs",
      "sources": ["native/syncfs.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "conditions": [["OS != 'linux'", {"type": "none", "sources": []}]]
    }
  ]
}
