// Package plansource loads a decode rank's route plan for the receiver
// agent from one of three places: a plan file (the output of `pdtopo plan
// -o json`), a directory where the PDPair's plan ConfigMaps are projected
// (following the kubelet's atomic updates), or the Kubernetes API. Each
// yields a receiver.PlanSnapshot for one engine rank; Watch polls a source
// and reports a new snapshot whenever the published plans change.
package plansource
