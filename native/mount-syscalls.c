// mount(2) and umount2(2) for the driver, as a tiny N-API addon. Running the mount
// program costs a fork+exec per volume (milliseconds, and it stalls Node's event loop
// while forking); the syscalls take microseconds. driver/volume/syscall-mounter.ts loads
// this and falls back to the mount program when the addon is not built.
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <node_api.h>

#define MAX_ARG 4096

static int get_string(napi_env env, napi_value value, char *buf, size_t size) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, buf, size, &len) != napi_ok) return 0;
  return len < size - 1;
}

static napi_value throw_errno(napi_env env, const char *syscall, int err) {
  napi_value message, code, error, name;
  const char *errname = strerrorname_np(err);
  napi_create_string_utf8(env, errname ? errname : "EUNKNOWN", NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, strerror(err), NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, code, message, &error);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &name);
  napi_set_named_property(env, error, "syscall", name);
  napi_throw(env, error);
  return NULL;
}

// mount(source, target, fstype, flags, data)
static napi_value js_mount(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  char source[MAX_ARG], target[MAX_ARG], fstype[256], data[MAX_ARG];
  uint32_t flags = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 5 || !get_string(env, argv[0], source, sizeof source) || !get_string(env, argv[1], target, sizeof target)
      || !get_string(env, argv[2], fstype, sizeof fstype) || napi_get_value_uint32(env, argv[3], &flags) != napi_ok
      || !get_string(env, argv[4], data, sizeof data)) {
    napi_throw_type_error(env, NULL, "mount(source, target, fstype, flags, data) takes 4 strings and a number");
    return NULL;
  }
  if (mount(source, target, fstype, flags, data) != 0) return throw_errno(env, "mount", errno);
  return NULL;
}

// umount(target, flags)
static napi_value js_umount(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  char target[MAX_ARG];
  uint32_t flags = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 2 || !get_string(env, argv[0], target, sizeof target) || napi_get_value_uint32(env, argv[1], &flags) != napi_ok) {
    napi_throw_type_error(env, NULL, "umount(target, flags) takes a string and a number");
    return NULL;
  }
  if (umount2(target, (int)flags) != 0) return throw_errno(env, "umount2", errno);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "mount", NAPI_AUTO_LENGTH, js_mount, NULL, &fn);
  napi_set_named_property(env, exports, "mount", fn);
  napi_create_function(env, "umount", NAPI_AUTO_LENGTH, js_umount, NULL, &fn);
  napi_set_named_property(env, exports, "umount", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
