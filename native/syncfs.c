/*
 * boxsync_syncfs: one durability point for many files (src/local/syncfs-native.ts, used by the file worker threads of
 * src/local/file-workers.ts): syncfs(2) on the file system of an open file, in libuv's pool.
 *
 * syncfs(fd, callback)   callback(errno): 0 once every file written on fd's file system is on disk; else the errno
 *                        (the caller then fsyncs each file of its batch, as it would without this addon):
 *                        - EOPNOTSUPP: the file system is not one this addon trusts syncfs(2) on (fstatfs f_type
 *                          not ext2/3/4, XFS, Btrfs or F2FS: on FUSE, network and other file systems syncfs may
 *                          return 0 without writing anything); nothing was done;
 *                        - ENOSYS: the kernel is older than 5.8, whose syncfs(2) does not report write-back errors;
 *                        - whatever syncfs(2) or fstatfs(2) answered (EIO, ENOSPC, ...).
 * The file descriptor must stay open until the callback runs. Errors of write-back are reported for writes made
 * after fd was opened (errseq, Linux 5.8+): the caller passes the fd of a file of the batch, opened before its writes.
 *
 * Registered with NAPI_MODULE_INIT, so a worker thread can load it too.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#define EXT_MAGIC 0xEF53
#define XFS_MAGIC 0x58465342
#define BTRFS_MAGIC 0x9123683E
#define F2FS_MAGIC 0xF2F52010

typedef struct {
  napi_async_work work;
  napi_ref callback;
  int fd;
  int err;
} Job;

/* syncfs(2) reports write-back errors since Linux 5.8. */
static int kernel_reports_errors(void) {
  struct utsname u;
  int major = 0, minor = 0;
  if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2) return 0;
  return major > 5 || (major == 5 && minor >= 8);
}

static int trusted(long type) {
  unsigned long t = (unsigned long)type & 0xFFFFFFFFUL;
  return t == EXT_MAGIC || t == XFS_MAGIC || t == BTRFS_MAGIC || t == F2FS_MAGIC;
}

static void execute(napi_env env, void *data) {
  (void)env;
  Job *job = data;
  if (!kernel_reports_errors()) {
    job->err = ENOSYS;
    return;
  }
  struct statfs s;
  if (fstatfs(job->fd, &s) != 0) {
    job->err = errno;
    return;
  }
  if (!trusted((long)s.f_type)) {
    job->err = EOPNOTSUPP;
    return;
  }
  job->err = syncfs(job->fd) == 0 ? 0 : errno;
}

static void complete(napi_env env, napi_status status, void *data) {
  Job *job = data;
  napi_value callback, global, arg;
  int err = status == napi_ok ? job->err : ECANCELED;
  if (napi_get_reference_value(env, job->callback, &callback) == napi_ok && napi_get_global(env, &global) == napi_ok &&
      napi_create_int32(env, err, &arg) == napi_ok) {
    napi_call_function(env, global, callback, 1, &arg, NULL);
  }
  napi_delete_reference(env, job->callback);
  napi_delete_async_work(env, job->work);
  free(job);
}

static napi_value do_syncfs(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], name;
  napi_valuetype t0, t1;
  int32_t fd;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) goto bad;
  if (napi_typeof(env, argv[0], &t0) != napi_ok || t0 != napi_number) goto bad;
  if (napi_typeof(env, argv[1], &t1) != napi_ok || t1 != napi_function) goto bad;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) goto bad;
  Job *job = calloc(1, sizeof(Job));
  if (job == NULL) goto bad;
  job->fd = fd;
  if (napi_create_reference(env, argv[1], 1, &job->callback) != napi_ok) {
    free(job);
    goto bad;
  }
  if (napi_create_string_utf8(env, "boxsync_syncfs", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute, complete, job, &job->work) != napi_ok) {
    napi_delete_reference(env, job->callback);
    free(job);
    goto bad;
  }
  if (napi_queue_async_work(env, job->work) != napi_ok) {
    napi_delete_async_work(env, job->work);
    napi_delete_reference(env, job->callback);
    free(job);
    goto bad;
  }
  return NULL;
bad:
  napi_throw_error(env, NULL, "boxsync_syncfs: syncfs(fd, callback) could not be started");
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "syncfs", NAPI_AUTO_LENGTH, do_syncfs, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "syncfs", fn) != napi_ok) return NULL;
  return exports;
}
