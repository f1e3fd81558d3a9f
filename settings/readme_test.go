package settings

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// SETTINGS.md's table is WriteMarkdown's, whole: a setting added to the table shows there.
func TestSettingsFileListsEverySetting(t *testing.T) {
	data, err := os.ReadFile("../SETTINGS.md")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	if err := WriteMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), want.String()) {
		t.Errorf("SETTINGS.md's table is not bin/proxybench settings -markdown: paste its output there:\n%s", want.String())
	}
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^help: .*\n(\t.*\n)*\t@bin/proxybench settings\n`).Match(mk) {
		t.Error("make help does not print bin/proxybench settings")
	}
}
