package docker

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// imageUse is what the driver knows of one image its tasks use.
type imageUse struct {
	// running counts this driver's running tasks of the image.
	running int
	// lastUsed is when the last of them exited.
	lastUsed time.Time
}

// useImage records a task of image starting (or recovered) running.
func (d *Driver) useImage(image string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	u := d.mu.images[image]
	if u == nil {
		u = &imageUse{}
		d.mu.images[image] = u
	}
	u.running++
}

// releaseImage records a task of image having exited.
func (d *Driver) releaseImage(image string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if u := d.mu.images[image]; u != nil {
		u.running = max(u.running-1, 0)
		u.lastUsed = d.cfg.Clock.Now()
	}
}

// collectImages is the driver's image GC goroutine: every ImageGCInterval
// it removes the images its tasks used that no task has run for
// ImageDelay, until Close.
func (d *Driver) collectImages() {
	defer d.watchers.Done()
	for {
		timer := d.cfg.Clock.NewTimer(d.cfg.ImageGCInterval)
		select {
		case <-timer.C():
		case <-d.ctx.Done():
			timer.Stop()
			return
		}
		d.collectOnce(d.ctx)
	}
}

// collectOnce removes the idle images: used by this driver's tasks, none
// of them running for ImageDelay, and no container of the daemon (ours or
// not) made from them. An image the daemon refuses to remove (in use, or
// a parent) is kept and tried again later.
func (d *Driver) collectOnce(ctx context.Context) {
	now := d.cfg.Clock.Now()
	var idle []string
	d.mu.Lock()
	for image, u := range d.mu.images {
		if u.running == 0 && now.Sub(u.lastUsed) >= d.cfg.ImageDelay {
			idle = append(idle, image)
		}
	}
	d.mu.Unlock()
	for _, image := range idle {
		if inUse, err := d.api.imageInUse(ctx, image); err != nil || inUse {
			continue
		}
		d.mu.Lock()
		u := d.mu.images[image]
		busy := u == nil || u.running > 0
		d.mu.Unlock()
		if busy {
			continue // a task started meanwhile
		}
		err := d.api.call(ctx, http.MethodDelete, "/images/"+image, nil, nil, nil)
		if err != nil && !errors.Is(err, errNotFound) {
			d.cfg.Logger.Info("docker: image GC kept an image", "image", image, "err", err)
			continue
		}
		d.mu.Lock()
		if u := d.mu.images[image]; u != nil && u.running == 0 {
			delete(d.mu.images, image)
		}
		d.mu.Unlock()
		d.cfg.Logger.Info("docker: image GC removed an unused image", "image", image)
	}
}

// imageInUse reports whether any container of the daemon, running or
// not, was made from image by that name. (Containers of another name of
// the same image do not hold this name: removing it only untags; the
// daemon refuses to remove an image's last name while a container uses
// it.)
func (a *api) imageInUse(ctx context.Context, image string) (bool, error) {
	filters, _ := json.Marshal(map[string][]string{"ancestor": {image}})
	var out []struct {
		Image string `json:"Image"`
	}
	err := a.call(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"true"}, "filters": {string(filters)}}, nil, &out)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, c := range out {
		if c.Image == image {
			return true, nil
		}
	}
	return false, nil
}
