// Command upstream-driver-facts is a test peer: it reports facts about upstream's
// Secrets Store CSI driver v1.6.0 (sigs.k8s.io/secrets-store-csi-driver) that our
// drop-in tests compare against, computed by upstream's own code rather than copied
// by hand. Only this file is ours; test/peers/install.sh builds it in a throwaway
// module that requires the released driver module, outside the work tree.
//
// Usage:
//
//	upstream-driver-facts flags <module dir>
//	    Prints, as JSON, every flag upstream's driver binary accepts: the ones
//	    cmd/secrets-store-csi-driver/main.go declares (read from its source), and the
//	    ones the packages it links register on Go's flag.CommandLine (klog's set,
//	    through klog.InitFlags(nil) as main.go calls it; controller-runtime's
//	    --kubeconfig; pkg/metrics' --metrics-backend).
//	upstream-driver-facts secret-data
//	    Reads {"type", "data": [{"objectName", "key"}], "files": {"<objectName>": "<path>"}}
//	    on stdin, runs upstream's secretutil.GetSecretData (the code that builds a
//	    synced Secret's data, kubernetes.io/tls conversion and PKCS#12 included) and
//	    prints {"data": {"<key>": "<base64>"}} or {"error": "<message>"}.
//
// Why not run upstream's binary with -help: its main package imports monis.app/mlog,
// which the module proxy reachable here refuses. main.go's own flags are therefore
// read from its source; every package main links is imported here for its init-time
// flag registrations, except mlog and pkg/secrets-store (which imports mlog), whose
// non-mlog imports are listed instead. mlog itself registers nothing on
// flag.CommandLine: its k8s.io/component-base/logs dependency registers klog's flags
// on a private FlagSet (read at component-base v0.30.1, the version upstream pins).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/klog/v2"
	secretsstorev1 "sigs.k8s.io/secrets-store-csi-driver/apis/v1"
	"sigs.k8s.io/secrets-store-csi-driver/pkg/util/secretutil"

	// The packages upstream's main.go imports (minus mlog and pkg/secrets-store) ...
	_ "google.golang.org/grpc"
	_ "k8s.io/apimachinery/pkg/fields"
	_ "k8s.io/apimachinery/pkg/labels"
	_ "k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/client-go/kubernetes/scheme"
	_ "net/http/pprof"
	_ "sigs.k8s.io/controller-runtime"
	_ "sigs.k8s.io/controller-runtime/pkg/cache"
	_ "sigs.k8s.io/controller-runtime/pkg/client"
	_ "sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	_ "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	_ "sigs.k8s.io/secrets-store-csi-driver/controllers"
	_ "sigs.k8s.io/secrets-store-csi-driver/pkg/metrics"
	_ "sigs.k8s.io/secrets-store-csi-driver/pkg/version"

	// ... and pkg/secrets-store's own non-test imports (minus mlog).
	_ "github.com/container-storage-interface/spec/lib/go/csi"
	_ "github.com/kubernetes-csi/csi-lib-utils/protosanitizer"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/metric"
	_ "k8s.io/mount-utils"
	_ "sigs.k8s.io/secrets-store-csi-driver/pkg/errors"
	_ "sigs.k8s.io/secrets-store-csi-driver/pkg/util/fileutil"
	_ "sigs.k8s.io/secrets-store-csi-driver/pkg/util/runtimeutil"
	_ "sigs.k8s.io/secrets-store-csi-driver/pkg/util/spcpsutil"
	_ "sigs.k8s.io/secrets-store-csi-driver/provider/v1alpha1"
)

// upstreamFlag is one flag upstream's driver accepts.
type upstreamFlag struct {
	Name string `json:"name"`
	Bool bool   `json:"bool"`
	// Kind: the flag package constructor's type for main.go (string, bool, int,
	// duration, ...); the Go type of the flag's Value for linked flags.
	Kind string `json:"kind"`
	// Default: a value the flag accepts (Go's DefValue; for main.go, the default
	// when it is a literal, else "" with Literal false).
	Default string `json:"default"`
	Literal bool   `json:"literal"`
	// Source: "main.go" or "linked" (registered by a linked package's init or klog.InitFlags).
	Source string `json:"source"`
}

// mainGoFlagFuncs maps the flag package's constructors to the position of the name
// argument and whether the flag is boolean.
var mainGoFlagFuncs = map[string]struct {
	nameArg int
	isBool  bool
}{
	"String": {0, false}, "Bool": {0, true}, "Int": {0, false}, "Int64": {0, false},
	"Uint": {0, false}, "Uint64": {0, false}, "Float64": {0, false}, "Duration": {0, false},
	"StringVar": {1, false}, "BoolVar": {1, true}, "IntVar": {1, false}, "Int64Var": {1, false},
	"UintVar": {1, false}, "Uint64Var": {1, false}, "Float64Var": {1, false}, "DurationVar": {1, false},
	"Func": {0, false}, "BoolFunc": {0, true},
}

// flagKind turns a flag constructor's name (StringVar, Duration, BoolFunc) into the
// flag's type (string, duration, bool).
func flagKind(constructor string) string {
	k := strings.TrimSuffix(strings.TrimSuffix(constructor, "Var"), "Func")
	if k == "" {
		return "func"
	}
	return strings.ToLower(k)
}

// mainGoFlags reads the flags main.go declares with the flag package, and whether it
// calls klog.InitFlags.
func mainGoFlags(path string) (flags []upstreamFlag, initsKlog bool, err error) {
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, false, err
	}
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || err != nil {
			return err == nil
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if pkg.Name == "klog" && sel.Sel.Name == "InitFlags" {
			initsKlog = true
		}
		if pkg.Name != "flag" {
			return true
		}
		spec, known := mainGoFlagFuncs[sel.Sel.Name]
		if !known {
			if sel.Sel.Name == "Var" || sel.Sel.Name == "TextVar" {
				err = fmt.Errorf("main.go: flag.%s: cannot tell whether it is boolean", sel.Sel.Name)
			}
			return true
		}
		lit, ok := call.Args[spec.nameArg].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			err = fmt.Errorf("main.go: flag.%s with a name that is not a string literal", sel.Sel.Name)
			return false
		}
		name, uerr := strconv.Unquote(lit.Value)
		if uerr != nil {
			err = uerr
			return false
		}
		f := upstreamFlag{Name: name, Bool: spec.isBool, Kind: flagKind(sel.Sel.Name), Source: "main.go"}
		if spec.nameArg+1 < len(call.Args) {
			switch d := call.Args[spec.nameArg+1].(type) {
			case *ast.BasicLit:
				f.Default, f.Literal = d.Value, true
				if d.Kind == token.STRING {
					f.Default, _ = strconv.Unquote(d.Value)
				}
			case *ast.Ident:
				if d.Name == "true" || d.Name == "false" {
					f.Default, f.Literal = d.Name, true
				}
			}
		}
		flags = append(flags, f)
		return true
	})
	return flags, initsKlog, err
}

func listFlags(moduleDir string) error {
	fromMain, initsKlog, err := mainGoFlags(filepath.Join(moduleDir, "cmd", "secrets-store-csi-driver", "main.go"))
	if err != nil {
		return err
	}
	if len(fromMain) == 0 {
		return errors.New("main.go declares no flags: wrong module directory?")
	}
	if initsKlog {
		klog.InitFlags(nil)
	}
	seen := map[string]bool{}
	all := append([]upstreamFlag(nil), fromMain...)
	for _, f := range fromMain {
		seen[f.Name] = true
	}
	var dup error
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if seen[f.Name] {
			// Upstream's binary would panic at start ("flag redefined").
			dup = fmt.Errorf("flag %s is registered twice", f.Name)
			return
		}
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		all = append(all, upstreamFlag{
			Name: f.Name, Bool: ok && b.IsBoolFlag(), Kind: reflect.TypeOf(f.Value).String(),
			Default: f.DefValue, Literal: true, Source: "linked",
		})
	})
	if dup != nil {
		return dup
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"flags": all})
}

type secretDataRequest struct {
	Type  string                             `json:"type"`
	Data  []*secretsstorev1.SecretObjectData `json:"data"`
	Files map[string]string                  `json:"files"`
}

func secretData() error {
	var req secretDataRequest
	dec := json.NewDecoder(os.Stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return err
	}
	data, err := secretutil.GetSecretData(req.Data, secretutil.GetSecretType(req.Type), req.Files)
	if err != nil {
		return json.NewEncoder(os.Stdout).Encode(map[string]string{"error": err.Error()})
	}
	// encoding/json writes []byte as base64.
	return json.NewEncoder(os.Stdout).Encode(map[string]map[string][]byte{"data": data})
}

func main() {
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[1] == "flags":
		err = listFlags(os.Args[2])
	case len(os.Args) == 2 && os.Args[1] == "secret-data":
		err = secretData()
	default:
		err = errors.New("usage: upstream-driver-facts flags <module dir> | secret-data")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream-driver-facts:", err)
		os.Exit(1)
	}
}
