package ws

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/ext"
)

func TestRegister(t *testing.T) {
	t.Parallel()

	extension, ok := ext.Get(ext.JSExtension)[importPath]
	require.True(t, ok, "k6/x/proxybench/ws is registered")
	assert.Equal(t, "k6/x/proxybench/ws", extension.Name)
	assert.IsType(t, &RootModule{}, extension.Module)
}
