# Not part of upstream: writes the data the copy trains on (upstream uses COCO 2014 and a
# style photograph): six 96x96 training images in dataset/train/ (ImageFolder wants one
# folder per class) and a 64x64 style image, all drawn with PIL.
import math
import os

from PIL import Image

os.makedirs("dataset/train", exist_ok=True)
for k in range(6):
    img = Image.new("RGB", (96, 96))
    img.putdata([(int(127 + 127 * math.sin((x + 5 * k) / 7.0)), (y * 255) // 95, 60 + 30 * k)
                 for y in range(96) for x in range(96)])
    img.save("dataset/train/%d.png" % k)
style = Image.new("RGB", (64, 64))
style.putdata([(255, 200, 0) if (x // 8 + y // 8) % 2 else (20, 40, 160) for y in range(64) for x in range(64)])
style.save("style.png")
