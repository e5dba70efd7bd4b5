
Root@
Hèr
Prefetch@HÐx	