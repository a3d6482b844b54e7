// Package petclinic is the root of the PetClinic example: a JSON web service on the
// Spring PetClinic domain (owners, pets, visits, vets) used as the workload of tigris.
// See README.md. The program is cmd/petclinic; its load driver is cmd/petclinic-load.
package petclinic
