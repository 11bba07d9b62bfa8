// kube-controller-manager built from the k8s.io/kubernetes module (see ../../go.mod).
//
// One addition for the harness's throw-away local plane: the Job controller's timing knobs, which
// upstream exports for its own tests, may be set from the environment before the manager starts.
// Unset (as on every real cluster), the upstream defaults stay:
//
//	TC_JOB_SYNC_BATCH_PERIOD         job.SyncJobBatchPeriod         (upstream 1s)
//	TC_JOB_POD_FAILURE_BACKOFF       job.DefaultJobPodFailureBackOff (upstream 10s)
//	TC_JOB_MAX_POD_FAILURE_BACKOFF   job.MaxJobPodFailureBackOff     (upstream 10m)
//
// Values are Go durations ("100ms"). They change how long the controller waits, never what it
// decides: a pod that fails six times still fails the Job after the same six replacements.
package main

import (
	"fmt"
	"os"
	"time"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
	"k8s.io/kubernetes/pkg/controller/job"
)

func durationFromEnv(name string, target *time.Duration) {
	value, ok := os.LookupEnv(name)
	if !ok || value == "" {
		return
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want a positive Go duration such as 100ms\n", name, value)
		os.Exit(2)
	}
	*target = d
}

func main() {
	durationFromEnv("TC_JOB_SYNC_BATCH_PERIOD", &job.SyncJobBatchPeriod)
	durationFromEnv("TC_JOB_POD_FAILURE_BACKOFF", &job.DefaultJobPodFailureBackOff)
	durationFromEnv("TC_JOB_MAX_POD_FAILURE_BACKOFF", &job.MaxJobPodFailureBackOff)
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
