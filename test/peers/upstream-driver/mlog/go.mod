// Our stand-in for monis.app/mlog (see mlog.go); not the real module.
module monis.app/mlog

go 1.22

require k8s.io/klog/v2 v2.120.1
