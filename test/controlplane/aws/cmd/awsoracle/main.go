// Command awsoracle answers questions about EC2 instances with cloud-provider-aws's own code
// (k8s.io/cloud-provider-aws v1.35.3, the release for Kubernetes 1.35; go.sum pins it), for the
// project's live differential against its aws adapter (test/providers/aws/upstream.differential.test.ts).
// One JSON request per line on stdin, one JSON answer per line on stdout, in the order asked
// (requests are answered concurrently: the cloud batches DescribeInstances over 100 ms).
//
//	{"config":"<cloud.conf>","node":{"name":...,"providerID":...,"labels":{...}}}
//
// The cloud is built as the cloud-controller-manager builds it: cloudprovider.GetCloudProvider("aws", config),
// i.e. the provider's registered factory (gcfg reading, ServiceOverride validation, the region from
// [Global] Zone or Region, newAWSCloud2), once per distinct config text. The config must point EC2
// at the emulator ([ServiceOverride] Service = EC2, URL = ...) and set VPC, SubnetID and
// KubernetesClusterID, so that the cloud needs no instance metadata service; credentials come from
// the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
//
// The answer holds what each InstancesV2 method and NodeAddressesByProviderID return for the node:
//
//	{"metadata":{"providerID","instanceType","zone","region","addresses"}} or {"metadataError":"..."},
//	{"exists":bool} or {"existsError":"..."}, {"shutdown":bool} or {"shutdownError":"..."},
//	{"addressesByProviderID":[...]} or {"addressesByProviderIDError":"..."} (asked only when the node has a providerID)
//
// The node is given the topology.k8s.aws/zone-id and network-node-layer labels (unless the request
// sets them), so InstanceMetadata skips DescribeAvailabilityZones and DescribeInstanceTopology:
// the emulator serves neither, and the labels they feed are not compared.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"
	awsv1 "k8s.io/cloud-provider-aws/pkg/providers/v1"
	"k8s.io/klog/v2"
)

type request struct {
	Config string `json:"config"`
	Node   struct {
		Name       string            `json:"name"`
		ProviderID string            `json:"providerID"`
		Labels     map[string]string `json:"labels"`
	} `json:"node"`
}

type metadata struct {
	ProviderID   string           `json:"providerID"`
	InstanceType string           `json:"instanceType"`
	Zone         string           `json:"zone"`
	Region       string           `json:"region"`
	Addresses    []v1.NodeAddress `json:"addresses"`
}

type answer struct {
	Metadata                   *metadata        `json:"metadata,omitempty"`
	MetadataError              string           `json:"metadataError,omitempty"`
	Exists                     *bool            `json:"exists,omitempty"`
	ExistsError                string           `json:"existsError,omitempty"`
	Shutdown                   *bool            `json:"shutdown,omitempty"`
	ShutdownError              string           `json:"shutdownError,omitempty"`
	AddressesByProviderID      []v1.NodeAddress `json:"addressesByProviderID,omitempty"`
	AddressesByProviderIDError string           `json:"addressesByProviderIDError,omitempty"`
	Error                      string           `json:"error,omitempty"`
}

var (
	cloudsMu sync.Mutex
	clouds   = map[string]cloudprovider.Interface{}
)

func cloudFor(config string) (cloudprovider.Interface, error) {
	cloudsMu.Lock()
	defer cloudsMu.Unlock()
	if c, ok := clouds[config]; ok {
		return c, nil
	}
	c, err := cloudprovider.GetCloudProvider(awsv1.ProviderName, strings.NewReader(config))
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("cloud provider %q is not registered", awsv1.ProviderName)
	}
	clouds[config] = c
	return c, nil
}

func main() {
	klog.SetOutput(os.Stderr)
	klog.LogToStderr(false)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	pending := make(chan chan answer, 4096)
	written := make(chan struct{})
	go func() {
		out := bufio.NewWriter(os.Stdout)
		enc := json.NewEncoder(out)
		for slot := range pending {
			if err := enc.Encode(<-slot); err != nil {
				fmt.Fprintf(os.Stderr, "awsoracle: %v\n", err)
				os.Exit(1)
			}
			// One answer as soon as it is known (and all before it): the caller may wait for each.
			if len(pending) == 0 {
				if err := out.Flush(); err != nil {
					os.Exit(1)
				}
			}
		}
		_ = out.Flush()
		close(written)
	}()
	for in.Scan() {
		slot := make(chan answer, 1)
		pending <- slot
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			slot <- answer{Error: "awsoracle: bad request: " + err.Error()}
			continue
		}
		go func() { slot <- handle(req) }()
	}
	close(pending)
	<-written
}

func handle(req request) answer {
	cloud, err := cloudFor(req.Config)
	if err != nil {
		return answer{Error: err.Error()}
	}
	instances, ok := cloud.InstancesV2()
	if !ok {
		return answer{Error: "the aws cloud has no InstancesV2"}
	}
	labels := map[string]string{awsv1.LabelZoneID: "use1-az1", awsv1.LabelNetworkNodePrefix + "1": "nn-1"}
	for k, v := range req.Node.Labels {
		labels[k] = v
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: req.Node.Name, Labels: labels}, Spec: v1.NodeSpec{ProviderID: req.Node.ProviderID}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var ans answer
	if md, err := instances.InstanceMetadata(ctx, node.DeepCopy()); err != nil {
		ans.MetadataError = err.Error()
	} else if md != nil {
		ans.Metadata = &metadata{ProviderID: md.ProviderID, InstanceType: md.InstanceType, Zone: md.Zone, Region: md.Region, Addresses: nonNil(md.NodeAddresses)}
	}
	if exists, err := instances.InstanceExists(ctx, node.DeepCopy()); err != nil {
		ans.ExistsError = err.Error()
	} else {
		ans.Exists = &exists
	}
	if shutdown, err := instances.InstanceShutdown(ctx, node.DeepCopy()); err != nil {
		ans.ShutdownError = err.Error()
	} else {
		ans.Shutdown = &shutdown
	}
	if v1Instances, ok := cloud.Instances(); ok && req.Node.ProviderID != "" {
		if addrs, err := v1Instances.NodeAddressesByProviderID(ctx, req.Node.ProviderID); err != nil {
			ans.AddressesByProviderIDError = err.Error()
		} else {
			ans.AddressesByProviderID = nonNil(addrs)
		}
	}
	return ans
}

func nonNil(a []v1.NodeAddress) []v1.NodeAddress {
	if a == nil {
		return []v1.NodeAddress{}
	}
	return a
}
