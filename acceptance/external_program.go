package acceptance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// installScript is what installs the external servers, from the
// repository's root.
const installScript = "acceptance/install.sh"

// programDirs are where findProgram looks beyond PATH: Debian puts nginx
// and haproxy in /usr/sbin, which a non-root PATH often lacks.
var programDirs = []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"}

// findProgram is the path of the executable name, from PATH or programDirs.
// When there is none it returns a *SkipError naming what is missing and
// the command that installs it; how is what install.sh runs for it.
func findProgram(name, how string) (string, error) {
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	for _, dir := range programDirs {
		path := filepath.Join(dir, name)
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
			return path, nil
		}
	}
	return "", &SkipError{Why: fmt.Sprintf("%s is not installed (not on PATH, nor in %v): run %s, which runs %s",
		name, programDirs, installScript, how)}
}
