// etcd server built from the go.etcd.io/etcd/server/v3 module (see ../../go.mod); the same
// entry point as etcd's own server/main.go.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
