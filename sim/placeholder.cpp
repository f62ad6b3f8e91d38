// placeholder: removed when sim sources land
