//go:build !linux

package localcp

import "syscall"

// childProcAttr puts a child in its own process group (a terminal's Ctrl-C
// reaches only the parent, which stops children in order).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
