"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "allspark-16x16"}> ({
}) : () -> ()
