// Package image writes container images as archives for `ctr -n k8s.io images import`: the
// machines the k8s runners are tested on have containerd but no image registry and no Docker
// engine, so the pods' images are written here, one uncompressed layer each.
package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Image is what Write puts in an archive.
type Image struct {
	// Ref names the image once imported, with its registry host and tag:
	// "proxybench.local/k6:abc123". containerd stores the name as given, while the kubelet
	// asks for the normalized one, so a short name ("k6:abc123", which the kubelet would
	// seek as docker.io/library/k6:abc123) is refused.
	Ref   string
	Files []File
	// Entrypoint, Env and WorkingDir are the image config's, written as they are.
	Entrypoint []string
	Env        []string
	WorkingDir string
}

const (
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"

	// annotationImageName names the image: containerd 1.6's importer (client Import,
	// imageName in import.go) takes it as the image's name as it is.
	annotationImageName = "io.containerd.image.name"
	// annotationRefName holds the tag alone, as the OCI layout spec has it: containerd reads it
	// only without annotationImageName, and then names the image "import-<date>:<tag>", or
	// "<--base-name>:<tag>".
	annotationRefName = "org.opencontainers.image.ref.name"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type imageConfig struct {
	platform
	Config struct {
		Env        []string `json:"Env,omitempty"`
		Entrypoint []string `json:"Entrypoint,omitempty"`
		WorkingDir string   `json:"WorkingDir,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// dockerManifest is an entry of manifest.json, the `docker save` layout. containerd 1.6 reads
// it only when the archive has no oci-layout file, which this one has: it is there for
// `docker load` and the other importers that know only that layout.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// Write writes img to w as an OCI image layout in a tar archive, with a `docker save`
// manifest.json beside it, and returns the digest of the image manifest. The same img
// (with the same source files) gives the same bytes.
func Write(w io.Writer, img Image) (string, error) {
	tag, err := tagOf(img.Ref)
	if err != nil {
		return "", err
	}
	entries, err := layerEntries(img.Files)
	if err != nil {
		return "", err
	}
	// The archive's blob header holds the layer's digest and size, which only the whole layer
	// gives. The layer goes to a temporary file, hashed as it is written: a second pass over
	// the sources would hold no copy either, but a source that changed between the passes
	// would give a blob whose digest is not the one the manifest names.
	layer, err := os.CreateTemp("", "pbimage-layer-*.tar")
	if err != nil {
		return "", fmt.Errorf("image.Write %s: %w", img.Ref, err)
	}
	defer os.Remove(layer.Name())
	defer layer.Close()
	layerDesc, err := writeLayer(layer, entries)
	if err != nil {
		return "", fmt.Errorf("image.Write %s: %w", img.Ref, err)
	}

	var cfg imageConfig
	cfg.platform = platform{Architecture: "amd64", OS: "linux"}
	cfg.Config.Env, cfg.Config.Entrypoint, cfg.Config.WorkingDir = img.Env, img.Entrypoint, img.WorkingDir
	cfg.RootFS.Type, cfg.RootFS.DiffIDs = "layers", []string{layerDesc.Digest} // uncompressed: the diff_id is the layer's digest
	configJSON, configDesc := marshal(mediaTypeConfig, cfg)
	manifestJSON, manifestDesc := marshal(mediaTypeManifest, manifest{2, mediaTypeManifest, configDesc, []descriptor{layerDesc}})
	named := manifestDesc
	named.Annotations = map[string]string{annotationImageName: img.Ref, annotationRefName: tag}
	named.Platform = &cfg.platform
	indexJSON, _ := marshal(mediaTypeIndex, index{2, mediaTypeIndex, []descriptor{named}})
	dockerJSON, _ := marshal("", []dockerManifest{{blobPath(configDesc), []string{img.Ref}, []string{blobPath(layerDesc)}}})

	// the small files first, so that a reader of the stream knows the image before its blobs
	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", indexJSON},
		{"manifest.json", dockerJSON},
		{"blobs/", nil},
		{"blobs/sha256/", nil},
		{blobPath(configDesc), configJSON},
		{blobPath(manifestDesc), manifestJSON},
	} {
		if err := writeEntry(tw, e.name, int64(len(e.data)), bytes.NewReader(e.data)); err != nil {
			return "", fmt.Errorf("image.Write %s: %w", img.Ref, err)
		}
	}
	if err := writeEntry(tw, blobPath(layerDesc), layerDesc.Size, layer); err != nil {
		return "", fmt.Errorf("image.Write %s: %w", img.Ref, err)
	}
	if err := tw.Close(); err != nil {
		return "", fmt.Errorf("image.Write %s: %w", img.Ref, err)
	}
	return manifestDesc.Digest, nil
}

// marshal encodes v and describes the bytes. The types marshalled cannot fail to encode.
func marshal(mediaType string, v any) ([]byte, descriptor) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return b, descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(b))}
}

// writeEntry writes a file of the archive, or a directory if name ends in a slash.
func writeEntry(tw *tar.Writer, name string, size int64, r io.Reader) error {
	hdr := header(name)
	if strings.HasSuffix(name, "/") {
		hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		return tw.WriteHeader(hdr)
	}
	hdr.Size = size
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, r, size); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func blobPath(d descriptor) string {
	return "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:")
}

var tagRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// tagOf returns ref's tag, and refuses a ref the kubelet would not find once imported.
func tagOf(ref string) (string, error) {
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if slash < 0 || colon < slash || strings.Contains(ref, "@") {
		return "", fmt.Errorf("image.Write: ref %q is not host/name:tag", ref)
	}
	if host := ref[:strings.Index(ref, "/")]; !strings.ContainsAny(host, ".:") && host != "localhost" {
		return "", fmt.Errorf("image.Write: ref %q has no registry host: the kubelet would look for it on docker.io", ref)
	}
	if tag := ref[colon+1:]; tagRE.MatchString(tag) && ref[:colon] == strings.ToLower(ref[:colon]) {
		return tag, nil
	}
	return "", fmt.Errorf("image.Write: ref %q: bad name or tag", ref)
}
