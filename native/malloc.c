/*
 * boxsync_malloc: glibc malloc's tuning for a small resident set, for src/cli/malloc-native.ts (issue 29 point 5).
 *
 * mallopt(param, value) -> 1 when glibc took the setting, 0 when not (or not glibc)
 * info()                -> malloc_info(0)'s XML (one <heap nr=".."> per arena), or "" when not glibc
 * M_ARENA_MAX           glibc's parameter number (absent without glibc: the loader then reports "not glibc")
 *
 * Nothing here allocates on behalf of JS beyond the info string; every call is synchronous and short.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define CHECK(call)                                                    \
  do {                                                                 \
    if ((call) != napi_ok) {                                           \
      napi_throw_error(env, NULL, "boxsync_malloc: " #call " failed"); \
      return NULL;                                                     \
    }                                                                  \
  } while (0)

static int32_t int_arg(napi_env env, napi_callback_info info, size_t i, int *ok) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t v = 0;
  *ok = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc <= i) return 0;
  if (napi_get_value_int32(env, argv[i], &v) != napi_ok) return 0;
  *ok = 1;
  return v;
}

static napi_value js_mallopt(napi_env env, napi_callback_info info) {
  int ok1, ok2;
  int32_t param = int_arg(env, info, 0, &ok1);
  int32_t value = int_arg(env, info, 1, &ok2);
  int r = 0;
#ifdef __GLIBC__
  if (ok1 && ok2) r = mallopt(param, value);
#else
  (void)param;
  (void)value;
#endif
  napi_value out;
  CHECK(napi_create_int32(env, r ? 1 : 0, &out));
  return out;
}

static napi_value js_info(napi_env env, napi_callback_info info) {
  (void)info;
  char *buf = NULL;
  size_t len = 0;
#ifdef __GLIBC__
  FILE *f = open_memstream(&buf, &len);
  if (f) {
    malloc_info(0, f);
    fclose(f);
  }
#endif
  napi_value out;
  napi_status s = napi_create_string_utf8(env, buf ? buf : "", buf ? len : 0, &out);
  free(buf);
  CHECK(s);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor fns[] = {
      {"mallopt", NULL, js_mallopt, NULL, NULL, NULL, napi_enumerable, NULL},
      {"info", NULL, js_info, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns));
#ifdef __GLIBC__
  napi_value arena_max;
  CHECK(napi_create_int32(env, M_ARENA_MAX, &arena_max));
  CHECK(napi_set_named_property(env, exports, "M_ARENA_MAX", arena_max));
#endif
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
