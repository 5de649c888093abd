package proc_test

import (
	"fmt"
	"os"

	"github.com/benchrig/benchrig/internal/proc"
)

// Example reads this process and its children from the machine's /proc.
func Example() {
	fs, err := proc.NewFS(proc.DefaultRoot)
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := fs.Stat(os.Getpid())
	if err != nil || st.Exited() {
		fmt.Println("cannot read myself:", err)
		return
	}
	kids, _ := fs.Descendants(os.Getpid())
	fmt.Println(st.PPID == os.Getppid(), len(kids) >= 0)
	// Output: true true
}

// ExampleParseCPUList parses and formats the kernel's CPU-list notation.
func ExampleParseCPUList() {
	cpus, err := proc.ParseCPUList("0-2,5")
	fmt.Println(cpus, err, proc.FormatCPUList(cpus))
	// Output: [0 1 2 5] <nil> 0-2,5
}
