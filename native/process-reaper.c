// The exec provider's process-reaper addon: prctl(PR_SET_CHILD_SUBREAPER) so that a
// helper's orphaned descendants (a child that called setsid and outlived its parent)
// are re-parented to the provider instead of init, where the provider can find and kill
// them; and waitpid(pid, WNOHANG) for one such adopted process, which libuv never reaps
// (it waits only for the children it spawned; waitpid(-1) here would steal theirs).
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

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

// setChildSubreaper(): makes this process the subreaper of its descendants.
static napi_value js_set_child_subreaper(napi_env env, napi_callback_info info) {
  (void)info;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return throw_errno(env, "prctl", errno);
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

// reap(pid): waitpid(pid, WNOHANG): pid when it was reaped, 0 while it runs, -1 when it is
// not a child of this process (ECHILD).
static napi_value js_reap(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  int32_t pid;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 1 || napi_get_value_int32(env, argv[0], &pid) != napi_ok || pid <= 0) {
    napi_throw_type_error(env, NULL, "reap(pid) takes a positive pid");
    return NULL;
  }
  int status;
  pid_t r;
  do r = waitpid((pid_t)pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r < 0 && errno != ECHILD) return throw_errno(env, "waitpid", errno);
  napi_create_int32(env, r < 0 ? -1 : (int32_t)r, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "setChildSubreaper", NAPI_AUTO_LENGTH, js_set_child_subreaper, NULL, &fn);
  napi_set_named_property(env, exports, "setChildSubreaper", fn);
  napi_create_function(env, "reap", NAPI_AUTO_LENGTH, js_reap, NULL, &fn);
  napi_set_named_property(env, exports, "reap", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
