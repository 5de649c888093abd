package target

import "github.com/benchrig/benchrig/internal/proc"

// ParseCPUList parses a CPU list in the kernel's notation ("0", "0-2,5");
// it is proc.ParseCPUList, kept here for the callers that name it so.
func ParseCPUList(s string) ([]int, error) { return proc.ParseCPUList(s) }

// FormatCPUList formats CPU numbers in the kernel's compact notation; it is
// proc.FormatCPUList.
func FormatCPUList(cpus []int) string { return proc.FormatCPUList(cpus) }
