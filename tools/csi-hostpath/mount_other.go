//go:build !linux

package main

import "errors"

var errNoMount = errors.New("mounting not supported here")

func bindMount(string, string, bool) error { return errNoMount }

func mounted(string) bool { return false }

func unmount(string) error { return errNoMount }
