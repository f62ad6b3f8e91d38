// placeholder so the sim library has a source until model/data land
