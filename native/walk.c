/*
 * boxsync_walk: one folder of the tree walk read and lstat-ed in C, for src/local/scan.ts (walk-native.ts).
 *
 * list(path) -> [names, meta]   the folder's entries ('.' and '..' left out), sorted as JavaScript's default sort
 *                               orders strings (UTF-16 code units). names: one string, the names joined by "\0" (a
 *                               name never holds a NUL; a newline is kept as it is). meta: a Float64Array of
 *                               WALK_FIELDS numbers per entry, in the same order: kind (0 file, 1 folder,
 *                               2 symlink, 3 anything else, or -errno when its lstat failed), size, mtime seconds,
 *                               mtime nanoseconds, inode. The mtime is given as the two numbers node's own stat
 *                               gives, so that JS computes mtimeMs with node's own arithmetic (bit for bit the
 *                               double the journal holds).
 *            -> -errno          the folder could not be opened or read (ENOENT, EACCES, ENOTDIR, ...)
 *            -> 1               a name in it is not valid UTF-8: the caller reads this folder its own way (as bytes)
 *            throws             only when N-API itself fails; the caller then reads the folder through node:fs
 * listAhead(paths) -> Promise    those answers, one per path, the folders read in turn on a libuv thread-pool
 *                               thread (rejected only when N-API fails)
 *
 * Each entry is lstat-ed relative to the folder's descriptor (fstatat(AT_SYMLINK_NOFOLLOW)): the kernel does not walk
 * the whole path again for every entry, and no node Stats object is made per entry. A symlink is reported as one and
 * never followed. list() is synchronous, so the caller uses it only on a local disk while its calls are quick
 * (quick-fs.ts): a hung network mount must never be read on the main thread. listAhead() reads on a pool thread, so
 * that the main thread does other work meanwhile; scan.ts uses it under the same conditions.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WALK_FIELDS 5

/* An N-API call that failed: the JS side gets an exception (walk-native.ts then treats the folder as node:fs would). */
#define CHECK(call) \
  if ((call) != napi_ok) goto napi_failed

/* Strict UTF-8, as node's buffer.isUtf8: no overlong forms, no surrogates, nothing past U+10FFFF. */
static int valid_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return 0;
    }
    if (i + len > n) return 0;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
    i += len;
  }
  return 1;
}

/* The next code point of valid UTF-8, as a key whose order is UTF-16's: a code point past U+FFFF is a surrogate pair
 * there (0xD800-0xDBFF first), so it sorts after U+D7FF and before U+E000. */
static uint32_t next_key(const unsigned char **p) {
  const unsigned char *s = *p;
  uint32_t cp;
  if (s[0] < 0x80) {
    cp = s[0];
    *p = s + 1;
  } else if (s[0] < 0xe0) {
    cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
    *p = s + 2;
  } else if (s[0] < 0xf0) {
    cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
    *p = s + 3;
  } else {
    cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) | ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
    *p = s + 4;
  }
  return cp >= 0xe000 && cp <= 0xffff ? cp + 0x200000 : cp;
}

typedef struct {
  size_t off; /* into the names buffer; each name ends with a NUL */
  size_t len;
} Name;

/* qsort_r's comparator: the names buffer comes as its argument, so two threads (workers) may list at once. */
static int by_utf16(const void *a, const void *b, void *base) {
  const Name *x = (const Name *)a, *y = (const Name *)b;
  const unsigned char *p = (const unsigned char *)base + x->off, *q = (const unsigned char *)base + y->off;
  const unsigned char *pe = p + x->len, *qe = q + y->len;
  while (p < pe && q < qe) {
    if (*p < 0x80 && *q < 0x80) {
      if (*p != *q) return *p < *q ? -1 : 1;
      p++;
      q++;
      continue;
    }
    uint32_t kp = next_key(&p), kq = next_key(&q);
    if (kp != kq) return kp < kq ? -1 : 1;
  }
  return (p < pe) - (q < qe);
}

/* One folder read: its entries sorted, joined and lstat-ed, or why not (errno_out, not_utf8). No N-API inside, so
 * that a thread-pool thread (list_ahead) may read a folder too. */
typedef struct {
  char *joined;   /* the names joined by NUL (at bytes) */
  size_t at;
  double *meta;   /* WALK_FIELDS numbers per entry */
  size_t count;
  int errno_out;  /* the folder could not be read (ENOMEM when memory ran out) */
  int not_utf8;   /* a name in it is not UTF-8 */
} Listing;

static void free_listing(Listing *l) {
  free(l->joined);
  free(l->meta);
  l->joined = NULL;
  l->meta = NULL;
}

static void read_folder(const char *path, size_t plen, Listing *out) {
  char *buf = NULL;
  Name *names = NULL;
  DIR *dir = NULL;
  size_t count = 0, cap_names = 0, used = 0, cap_buf = 0;
  memset(out, 0, sizeof *out);

  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    out->errno_out = errno;
    goto done;
  }
  dir = fdopendir(fd);
  if (!dir) {
    out->errno_out = errno;
    close(fd);
    goto done;
  }
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(dir);
    if (!d) {
      out->errno_out = errno;
      break;
    }
    const char *n = d->d_name;
    if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
    size_t len = strlen(n);
    if (!valid_utf8((const unsigned char *)n, len)) {
      out->not_utf8 = 1;
      break;
    }
    if (count == cap_names) {
      size_t cap = cap_names ? cap_names * 2 : 64;
      Name *grown = realloc(names, cap * sizeof *names);
      if (!grown) goto nomem;
      names = grown;
      cap_names = cap;
    }
    if (used + len + 1 > cap_buf) {
      size_t cap = cap_buf ? cap_buf * 2 : 4096;
      while (cap < used + len + 1) cap *= 2;
      char *grown = realloc(buf, cap);
      if (!grown) goto nomem;
      buf = grown;
      cap_buf = cap;
    }
    memcpy(buf + used, n, len + 1);
    names[count].off = used;
    names[count].len = len;
    used += len + 1;
    count++;
  }
  if (out->errno_out != 0 || out->not_utf8) goto done;

  if (count > 1) qsort_r(names, count, sizeof *names, by_utf16, buf);

  out->meta = malloc(count ? count * WALK_FIELDS * sizeof(double) : 1);
  out->joined = malloc(used ? used : 1);
  if (!out->meta || !out->joined) goto nomem;
  double *m = out->meta;
  size_t at = 0;
  int dfd = dirfd(dir);
  for (size_t i = 0; i < count; i++) {
    const char *n = buf + names[i].off;
    memcpy(out->joined + at, n, names[i].len);
    at += names[i].len;
    if (i + 1 < count) out->joined[at++] = 0;
    struct stat st;
    double *e = m + i * WALK_FIELDS;
    /* The path node's lstat would be given: past PATH_MAX the kernel refuses it, so the entry is refused here too. */
    if (plen + 1 + names[i].len >= PATH_MAX) {
      e[0] = -(double)ENAMETOOLONG;
      e[1] = e[2] = e[3] = e[4] = 0;
      continue;
    }
    if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      e[0] = -(double)errno;
      e[1] = e[2] = e[3] = e[4] = 0;
      continue;
    }
    e[0] = S_ISLNK(st.st_mode) ? 2 : S_ISDIR(st.st_mode) ? 1 : S_ISREG(st.st_mode) ? 0 : 3;
    e[1] = (double)st.st_size;
    e[2] = (double)st.st_mtim.tv_sec;
    e[3] = (double)st.st_mtim.tv_nsec;
    e[4] = (double)st.st_ino;
  }
  out->at = at;
  out->count = count;
  goto done;

nomem:
  free_listing(out);
  out->errno_out = ENOMEM;
  out->not_utf8 = 0;
done:
  if (dir) closedir(dir);
  free(buf);
  free(names);
}

/* The JS answer of list(): [names, meta], or the number that says why not. NULL (an exception pending) when N-API failed. */
static napi_value listing_to_js(napi_env env, const Listing *l) {
  napi_value result = NULL;
  if (l->errno_out != 0 || l->not_utf8) {
    CHECK(napi_create_int32(env, l->not_utf8 ? 1 : -l->errno_out, &result));
    return result;
  }
  void *data = NULL;
  napi_value ab, meta, joined_str, arr;
  CHECK(napi_create_arraybuffer(env, l->count * WALK_FIELDS * sizeof(double), &data, &ab));
  if (l->count) memcpy(data, l->meta, l->count * WALK_FIELDS * sizeof(double));
  CHECK(napi_create_typedarray(env, napi_float64_array, l->count * WALK_FIELDS, ab, 0, &meta));
  CHECK(napi_create_string_utf8(env, l->joined, l->at, &joined_str));
  CHECK(napi_create_array_with_length(env, 2, &arr));
  CHECK(napi_set_element(env, arr, 0, joined_str));
  CHECK(napi_set_element(env, arr, 1, meta));
  return arr;

napi_failed:
  napi_throw_error(env, NULL, "boxsync_walk: an N-API call failed");
  return NULL;
}

/* The path argument, malloc'ed (NULL with an exception pending, or with *bad set when it holds a NUL). */
static char *path_arg(napi_env env, napi_value v, size_t *plen, int *bad) {
  *bad = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, plen) != napi_ok) {
    napi_throw_type_error(env, NULL, "boxsync_walk: list(path: string)");
    return NULL;
  }
  char *path = malloc(*plen + 1);
  if (!path) {
    napi_throw_error(env, NULL, "boxsync_walk: out of memory");
    return NULL;
  }
  if (napi_get_value_string_utf8(env, v, path, *plen + 1, plen) != napi_ok) {
    free(path);
    napi_throw_error(env, NULL, "boxsync_walk: an N-API call failed");
    return NULL;
  }
  /* A NUL inside the string would make open() read a shorter path than asked for (node:fs refuses such a path). */
  *bad = strlen(path) != *plen;
  return path;
}

static napi_value js_list(napi_env env, napi_callback_info info) {
  size_t argc = 1, plen = 0;
  napi_value argv[1];
  int bad = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) {
    napi_throw_type_error(env, NULL, "boxsync_walk: list(path: string)");
    return NULL;
  }
  char *path = path_arg(env, argv[0], &plen, &bad);
  if (!path) return NULL;
  Listing l;
  if (bad) {
    memset(&l, 0, sizeof l);
    l.errno_out = EINVAL;
  } else {
    read_folder(path, plen, &l);
  }
  free(path);
  napi_value result = listing_to_js(env, &l);
  free_listing(&l);
  return result;
}

/* listAhead(paths) -> Promise of [what list(path) answers, for each path]: the folders read in turn on one libuv
 * thread-pool thread, so that the main thread does other work meanwhile (scan.ts reads the next folders of its walk
 * this way while it compares the current one with the journal). One piece of work for several folders: each wakes a
 * pool thread and comes back through the event loop once. */
typedef struct {
  char *path;
  size_t plen;
  int bad;
  Listing listing;
} AheadPath;

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  uint32_t count;
  AheadPath *paths;
} Ahead;

static void free_ahead(Ahead *a) {
  for (uint32_t i = 0; i < a->count; i++) {
    free_listing(&a->paths[i].listing);
    free(a->paths[i].path);
  }
  free(a->paths);
  free(a);
}

static void ahead_execute(napi_env env, void *data) {
  (void)env;
  Ahead *a = data;
  for (uint32_t i = 0; i < a->count; i++) {
    AheadPath *p = &a->paths[i];
    if (p->bad) {
      memset(&p->listing, 0, sizeof p->listing);
      p->listing.errno_out = EINVAL;
    } else {
      read_folder(p->path, p->plen, &p->listing);
    }
  }
}

static void ahead_complete(napi_env env, napi_status status, void *data) {
  Ahead *a = data;
  napi_value result = NULL;
  if (status == napi_ok && napi_create_array_with_length(env, a->count, &result) == napi_ok) {
    for (uint32_t i = 0; i < a->count && result != NULL; i++) {
      napi_value one = listing_to_js(env, &a->paths[i].listing);
      if (one == NULL || napi_set_element(env, result, i, one) != napi_ok) result = NULL;
    }
  } else {
    result = NULL;
  }
  if (result != NULL) {
    napi_resolve_deferred(env, a->deferred, result);
  } else {
    napi_value err = NULL, msg = NULL;
    bool pending = false;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending) napi_get_and_clear_last_exception(env, &err);
    if (err == NULL && napi_create_string_utf8(env, "boxsync_walk: listAhead failed", NAPI_AUTO_LENGTH, &msg) == napi_ok) napi_create_error(env, NULL, msg, &err);
    if (err == NULL) napi_get_undefined(env, &err);
    napi_reject_deferred(env, a->deferred, err);
  }
  napi_delete_async_work(env, a->work);
  free_ahead(a);
}

static napi_value js_list_ahead(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], promise, name;
  bool is_array = false;
  uint32_t count = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[0], &count) != napi_ok) {
    napi_throw_type_error(env, NULL, "boxsync_walk: listAhead(paths: string[])");
    return NULL;
  }
  Ahead *a = calloc(1, sizeof *a);
  if (!a) goto nomem;
  a->paths = calloc(count ? count : 1, sizeof *a->paths);
  if (!a->paths) goto nomem;
  for (uint32_t i = 0; i < count; i++) {
    napi_value v;
    if (napi_get_element(env, argv[0], i, &v) != napi_ok) goto failed;
    a->paths[i].path = path_arg(env, v, &a->paths[i].plen, &a->paths[i].bad);
    if (!a->paths[i].path) goto thrown;
    a->count = i + 1;
  }
  if (napi_create_promise(env, &a->deferred, &promise) != napi_ok) goto failed;
  if (napi_create_string_utf8(env, "boxsync_walk.listAhead", NAPI_AUTO_LENGTH, &name) != napi_ok) goto failed;
  if (napi_create_async_work(env, NULL, name, ahead_execute, ahead_complete, a, &a->work) != napi_ok) goto failed;
  if (napi_queue_async_work(env, a->work) != napi_ok) {
    napi_delete_async_work(env, a->work);
    goto failed;
  }
  return promise;

failed:
  /* A deferred made and never settled is only garbage; the caller gets the exception and reads the folders itself. */
  napi_throw_error(env, NULL, "boxsync_walk: an N-API call failed");
thrown:
  free_ahead(a);
  return NULL;
nomem:
  if (a) free(a);
  napi_throw_error(env, NULL, "boxsync_walk: out of memory");
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"list", NULL, js_list, NULL, NULL, NULL, napi_default, NULL},
      {"listAhead", NULL, js_list_ahead, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) {
    napi_throw_error(env, NULL, "boxsync_walk: napi_define_properties failed");
    return NULL;
  }
  int32_t fields = WALK_FIELDS;
  napi_value v;
  if (napi_create_int32(env, fields, &v) == napi_ok) napi_set_named_property(env, exports, "fields", v);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
