/*
 * boxsync_inotify: one inotify instance per watcher, for src/local/watcher-inotify.ts.
 *
 * open(onEvents)   -> handle   inotify_init1(IN_NONBLOCK | IN_CLOEXEC), its fd polled on Node's libuv loop.
 *                               onEvents(buffer) receives the raw `struct inotify_event` records read in one
 *                               turn (wd, mask, cookie, len, name), many events per call; JS parses them.
 * add(handle, path, mask) -> wd >= 0, or -errno (ENOSPC, ENOENT, ENOTDIR, ...)
 * remove(handle, wd)      -> 0, or -errno
 * fd(handle)              -> the inotify fd (for /proc/self/fdinfo), -1 once closed
 * close(handle)           stops polling and closes the fd; idempotent, also run when the environment exits.
 *
 * The per-watch state lives in JS (a wd -> path table); here there is only the fd and the poll handle.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* Bytes read per turn of the loop at most (about 8,000 events of short names): the rest is read on the next turn,
 * so a burst never holds the event loop for long. */
#define READ_CHUNK 65536
#define MAX_PER_TURN (4 * READ_CHUNK)

typedef struct {
  int fd;
  int closed;
  uv_poll_t *poll; /* freed by uv_close's callback */
  napi_env env;
  napi_ref callback;
  napi_async_context async;
} Inst;

#define CHECK(call)                                                 \
  do {                                                              \
    if ((call) != napi_ok) {                                        \
      napi_throw_error(env, NULL, "boxsync_inotify: " #call " failed"); \
      return NULL;                                                  \
    }                                                               \
  } while (0)

static void on_poll_closed(uv_handle_t *h) { free(h); }

static void inst_close(Inst *in) {
  if (in->closed) return;
  in->closed = 1;
  if (in->poll) {
    uv_poll_stop(in->poll);
    uv_close((uv_handle_t *)in->poll, on_poll_closed);
    in->poll = NULL;
  }
  if (in->fd >= 0) close(in->fd);
  in->fd = -1;
  if (in->callback) napi_delete_reference(in->env, in->callback);
  in->callback = NULL;
  if (in->async) napi_async_destroy(in->env, in->async);
  in->async = NULL;
}

static void env_cleanup(void *arg) { inst_close((Inst *)arg); }

static void inst_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  Inst *in = (Inst *)data;
  napi_remove_env_cleanup_hook(env, env_cleanup, in);
  inst_close(in);
  free(in);
}

static void on_readable(uv_poll_t *h, int status, int events) {
  (void)events;
  Inst *in = (Inst *)h->data;
  if (in->closed) return;
  char *buf = malloc(MAX_PER_TURN);
  if (!buf) return;
  size_t used = 0;
  int err = 0;
  while (used + READ_CHUNK <= MAX_PER_TURN) {
    ssize_t n = read(in->fd, buf + used, READ_CHUNK);
    if (n > 0) {
      used += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) err = errno;
    break;
  }
  if (status < 0 && err == 0) err = -status;
  napi_env env = in->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) {
    free(buf);
    return;
  }
  napi_value cb, recv, argv[2], result;
  if (napi_get_reference_value(env, in->callback, &cb) == napi_ok && cb != NULL &&
      napi_get_global(env, &recv) == napi_ok /* make_callback wants an object */ &&
      napi_create_buffer_copy(env, used, buf, NULL, &argv[0]) == napi_ok &&
      napi_create_int32(env, err, &argv[1]) == napi_ok) {
    if (napi_make_callback(env, in->async, recv, cb, 2, argv, &result) == napi_pending_exception) {
      napi_value exc;
      napi_get_and_clear_last_exception(env, &exc);
      napi_fatal_exception(env, exc);
    }
  }
  napi_close_handle_scope(env, scope);
  free(buf);
  if (err != 0 && !in->closed && in->poll) uv_poll_stop(in->poll); /* reported once; JS degrades */
}

/* The call's arguments (`want` of them, the first an inotify handle) and its instance; NULL with a JS error thrown. */
static Inst *args_inst(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  Inst *in = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want ||
      napi_get_value_external(env, argv[0], (void **)&in) != napi_ok) {
    napi_throw_type_error(env, NULL, "boxsync_inotify: expected an inotify handle and its arguments");
    return NULL;
  }
  return in;
}

static napi_value int_value(napi_env env, int32_t v) {
  napi_value out;
  CHECK(napi_create_int32(env, v, &out));
  return out;
}

static napi_value js_open(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype t;
  if (argc < 1 || napi_typeof(env, argv[0], &t) != napi_ok || t != napi_function) {
    napi_throw_type_error(env, NULL, "boxsync_inotify.open(onEvents): onEvents must be a function");
    return NULL;
  }
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    char code[16];
    const char *name = errno == EMFILE ? "EMFILE" : errno == ENFILE ? "ENFILE" : errno == ENOMEM ? "ENOMEM" : "EINOTIFY";
    strncpy(code, name, sizeof code - 1);
    code[sizeof code - 1] = 0;
    napi_throw_error(env, code, strerror(errno));
    return NULL;
  }
  uv_loop_t *loop;
  Inst *in = calloc(1, sizeof *in);
  uv_poll_t *poll = calloc(1, sizeof *poll);
  if (!in || !poll || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, poll, fd) != 0) {
    free(in);
    free(poll);
    close(fd);
    napi_throw_error(env, NULL, "boxsync_inotify: could not poll the inotify fd");
    return NULL;
  }
  in->fd = fd;
  in->env = env;
  in->poll = poll;
  poll->data = in;
  napi_value name, handle;
  CHECK(napi_create_reference(env, argv[0], 1, &in->callback));
  CHECK(napi_create_string_utf8(env, "boxsync_inotify", NAPI_AUTO_LENGTH, &name));
  CHECK(napi_async_init(env, NULL, name, &in->async));
  CHECK(napi_create_external(env, in, inst_finalize, NULL, &handle));
  CHECK(napi_add_env_cleanup_hook(env, env_cleanup, in));
  uv_poll_start(poll, UV_READABLE, on_readable);
  return handle;
}

static napi_value js_add(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  Inst *in = args_inst(env, info, 3, argv);
  if (!in) return NULL;
  size_t len;
  CHECK(napi_get_value_string_utf8(env, argv[1], NULL, 0, &len));
  char *path = malloc(len + 1);
  if (!path) {
    napi_throw_error(env, NULL, "boxsync_inotify: out of memory");
    return NULL;
  }
  napi_status st = napi_get_value_string_utf8(env, argv[1], path, len + 1, &len);
  uint32_t mask;
  if (st != napi_ok || napi_get_value_uint32(env, argv[2], &mask) != napi_ok) {
    free(path);
    napi_throw_type_error(env, NULL, "boxsync_inotify.add: path must be a string and mask a number");
    return NULL;
  }
  int wd = in->closed ? -EBADF : inotify_add_watch(in->fd, path, mask);
  if (wd < 0 && !in->closed) wd = -errno;
  free(path);
  return int_value(env, wd);
}

static napi_value js_remove(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  Inst *in = args_inst(env, info, 2, argv);
  if (!in) return NULL;
  int32_t wd;
  CHECK(napi_get_value_int32(env, argv[1], &wd));
  int r = in->closed ? -EBADF : inotify_rm_watch(in->fd, wd);
  if (r < 0 && !in->closed) r = -errno;
  return int_value(env, r);
}

static napi_value js_fd(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  Inst *in = args_inst(env, info, 1, argv);
  return in ? int_value(env, in->closed ? -1 : in->fd) : NULL;
}

static napi_value js_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  Inst *in = args_inst(env, info, 1, argv);
  if (!in) return NULL;
  inst_close(in);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"open", NULL, js_open, NULL, NULL, NULL, napi_default, NULL},
      {"add", NULL, js_add, NULL, NULL, NULL, napi_default, NULL},
      {"remove", NULL, js_remove, NULL, NULL, NULL, napi_default, NULL},
      {"fd", NULL, js_fd, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, js_close, NULL, NULL, NULL, napi_default, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
