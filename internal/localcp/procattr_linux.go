package localcp

import "syscall"

// childProcAttr puts a child in its own process group (a terminal's Ctrl-C
// reaches only the parent, which stops children in order) and has the kernel
// kill it if the parent dies without stopping it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
