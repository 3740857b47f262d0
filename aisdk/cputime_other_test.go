//go:build !linux

package aisdk

import "testing"

// threadCPU is not measured here: no thread-cpu-ns/op figure is reported.
func threadCPU(*testing.B) (report func()) { return func() {} }
