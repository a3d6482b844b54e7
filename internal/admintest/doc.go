// Package admintest serves the admin API of a test binary, for the tests of
// its clients (package adminclient, tigris ctl, the PetClinic demo): the
// binary's monitor gets three probes in package shop.example/shop, called a
// known number of times, and every test gets a server of its own.
package admintest
